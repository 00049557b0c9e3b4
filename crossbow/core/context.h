#pragma once

#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>

namespace crossbow {

enum class DeviceType : uint8_t { kCPU = 0, kCUDA = 1 };
const char* DeviceName(DeviceType type);

// What an operator runs on. A CPU context belongs to one learner: its oneDNN engine and
// stream, the number of threads its kernels may use, and its random generator (fillers,
// dropout), so that learners never share mutable state.
class CPUContext {
 public:
  explicit CPUContext(uint64_t seed = 0, int num_threads = 1);

  static constexpr DeviceType device() { return DeviceType::kCPU; }
  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }
  std::mt19937_64& rng() { return rng_; }
  int num_threads() const { return num_threads_; }
  // Makes the calling thread run this context's kernels on num_threads() threads.
  void BindThread() const;

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::mt19937_64 rng_;
  int num_threads_;
};

}  // namespace crossbow
