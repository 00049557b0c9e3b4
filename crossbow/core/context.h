#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>

namespace crossbow {

enum class DeviceType : uint8_t { kCPU = 0, kCUDA = 1 };
// See crossbow/core/precision.h.
enum class Precision { kFP32, kBF16, kTF32, kFP16 };
const char* DeviceName(DeviceType type);

// Where a tensor's bytes live and where an operator runs: the CPU, or GPU `index`.
struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string ToString() const;  // "cpu" or "cuda:1"
};
// "cpu", "cuda" (GPU 0) or "cuda:N".
Device ParseDevice(const std::string& text);

// A sequence of device work recorded once and replayed (a CUDA graph).
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  virtual void Replay() = 0;
};

// What a net needs of any context: where it runs, how a thread starts using it, and (on
// devices that support it) recording a run of operators for replay.
class ContextBase {
 public:
  virtual ~ContextBase() = default;
  virtual Device device() const = 0;
  // Called by the thread that is about to run operators on this context.
  virtual void BindThread() const = 0;
  // Records the device work `body` issues; nullptr where the device cannot record.
  virtual std::unique_ptr<CapturedWork> Capture(const std::function<void()>& body) {
    return nullptr;
  }
  // Waits until the work issued so far has finished (a no-op on the CPU).
  virtual void Synchronize() {}
  // Copies bytes between host and this device (either way), ordered after the work issued so
  // far; it may still be running when it returns (call Synchronize before reading `dst` on
  // the host or reusing `src`).
  virtual void Copy(void* dst, const void* src, size_t bytes);
  // Device memory the context itself holds (library workspaces, scratch): part of what one
  // more learner costs.
  virtual size_t HeldBytes() const { return 0; }

  // The arithmetic its convolutions (and GPU matrix products) use, set before the first
  // operator runs (checked by CheckPrecisionOn). Operators read it when they build.
  Precision precision() const { return precision_; }
  virtual void set_precision(Precision precision) { precision_ = precision; }

 private:
  Precision precision_ = Precision::kFP32;
};

// What an operator runs on. A CPU context belongs to one learner: its oneDNN engine and
// stream, the number of threads its kernels may use, and its random generator (fillers,
// dropout), so that learners never share mutable state.
class CPUContext : public ContextBase {
 public:
  explicit CPUContext(uint64_t seed = 0, int num_threads = 1);

  Device device() const override { return Device{}; }
  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }
  std::mt19937_64& rng() { return rng_; }
  int num_threads() const { return num_threads_; }
  // Makes the calling thread run this context's kernels on num_threads() threads.
  void BindThread() const override;
  // At least `bytes` of 64-byte aligned memory for one primitive's oneDNN scratchpad, valid
  // until the next call: the context's operators run one at a time.
  void* Scratchpad(size_t bytes);

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  std::mt19937_64 rng_;
  int num_threads_;
  std::shared_ptr<uint8_t> scratchpad_;
  size_t scratchpad_bytes_ = 0;
};

}  // namespace crossbow
