#include "crossbow/core/context.h"

#include <omp.h>

#include <cstring>

#include "crossbow/core/device_backend.h"
#include "crossbow/core/enforce.h"

namespace crossbow {

const char* DeviceName(DeviceType type) { return type == DeviceType::kCPU ? "CPU" : "CUDA"; }

std::string Device::ToString() const {
  return type == DeviceType::kCPU ? "cpu" : "cuda:" + std::to_string(index);
}

Device ParseDevice(const std::string& text) {
  if (text == "cpu") return Device{};
  if (text == "cuda") return Device{DeviceType::kCUDA, 0};
  const std::string prefix = "cuda:";
  if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size() &&
      text.find_first_not_of("0123456789", prefix.size()) == std::string::npos) {
    return Device{DeviceType::kCUDA, std::stoi(text.substr(prefix.size()))};
  }
  throw ValueError(detail::Concat("unknown device '", text, "'; expected cpu, cuda or cuda:N"));
}

void ContextBase::Copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

CPUContext::CPUContext(uint64_t seed, int num_threads)
    : engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      rng_(seed),
      num_threads_(num_threads < 1 ? 1 : num_threads) {}

void CPUContext::BindThread() const { omp_set_num_threads(num_threads_); }

void* CPUContext::Scratchpad(size_t bytes) {
  if (bytes > scratchpad_bytes_) {
    scratchpad_.reset();
    scratchpad_ = AllocateAligned(bytes);
    scratchpad_bytes_ = bytes;
  }
  return scratchpad_.get();
}

}  // namespace crossbow
