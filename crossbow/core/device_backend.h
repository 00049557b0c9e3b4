#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "crossbow/core/context.h"

namespace crossbow {

// What core needs of a device other than the CPU. Its backend (the CUDA one, when built)
// registers it at load time, so that core itself links no device library.
struct DeviceBackend {
  // Bytes on GPU `index`; throws OutOfMemoryError when the device has none left.
  std::function<std::shared_ptr<uint8_t>(size_t bytes, int index)> allocate;
  // Synchronous copy between any two devices, one of which is this backend's.
  std::function<void(void* dst, Device dst_device, const void* src, Device src_device,
                     size_t bytes)>
      copy;
  // Page-locked host memory (fast, asynchronous host-to-device copies).
  std::function<std::shared_ptr<uint8_t>(size_t bytes)> allocate_pinned;
  // Devices present on this machine.
  std::function<int()> device_count;
  // A context on GPU `index` (its stream, library handles, random seed).
  std::function<std::unique_ptr<ContextBase>(int index, uint64_t seed)> make_context;
};

bool RegisterDeviceBackend(DeviceType type, DeviceBackend backend);
// Throws, saying how Crossbow was built, when no backend for `type` is registered.
const DeviceBackend& GetDeviceBackend(DeviceType type);
bool HasDeviceBackend(DeviceType type);
// GPUs usable now: 0 without a CUDA build or without a GPU.
int CudaDeviceCount();

// 64-byte aligned allocation for CPU tensors and planned buffers.
std::shared_ptr<uint8_t> AllocateAligned(size_t bytes);
std::shared_ptr<uint8_t> AllocateOn(Device device, size_t bytes);
// Host memory for batches that will be copied to a GPU: page-locked when a GPU is present.
std::shared_ptr<uint8_t> AllocateHostForTransfer(size_t bytes);
// A context for one learner on `device`: `threads` CPU threads on the CPU.
std::unique_ptr<ContextBase> MakeContext(Device device, uint64_t seed, int threads);
// Synchronous; ordered after the work of the context the calling thread bound.
void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes);

}  // namespace crossbow
