#include "crossbow/core/device_backend.h"

#include <cstdlib>
#include <cstring>
#include <map>

#include "crossbow/core/enforce.h"
#include "crossbow/core/host_memory.h"

namespace crossbow {
namespace {

std::map<DeviceType, DeviceBackend>& Backends() {
  static std::map<DeviceType, DeviceBackend> backends;
  return backends;
}

}  // namespace

bool RegisterDeviceBackend(DeviceType type, DeviceBackend backend) {
  Backends()[type] = std::move(backend);
  return true;
}

bool HasDeviceBackend(DeviceType type) { return Backends().count(type) > 0; }

const DeviceBackend& GetDeviceBackend(DeviceType type) {
  auto it = Backends().find(type);
  CROSSBOW_ENFORCE_VALUE(it != Backends().end(), "this Crossbow was built without ",
                         DeviceName(type), " support (configure with -DCROSSBOW_CUDA=ON on a ",
                         "machine with the CUDA toolkit and cuDNN)");
  return it->second;
}

int CudaDeviceCount() {
  return HasDeviceBackend(DeviceType::kCUDA) ? GetDeviceBackend(DeviceType::kCUDA).device_count()
                                             : 0;
}

std::shared_ptr<uint8_t> AllocateAligned(size_t bytes) {
  // Linux grants an allocation larger than the memory left and kills the process (or another)
  // when its pages are touched: a large one is checked first, so that a batch too large for the
  // host is an error rather than a kill. Each tensor is written soon after it is allocated, so
  // the memory left falls as a net's first run allocates; a reserve is left for the rest of
  // the host.
  constexpr size_t kCheckedBytes = size_t{64} << 20, kReserveBytes = size_t{1} << 30;
  if (bytes >= kCheckedBytes) {
    const size_t available = AvailableHostMemoryBytes();
    if (bytes + kReserveBytes > available) {
      throw OutOfMemoryError(detail::Concat(
          "out of host memory allocating ", bytes >> 20, " MiB: the host has ", available >> 20,
          " MiB available, ", kReserveBytes >> 20, " MiB of which are left to the rest of it"));
    }
  }
  constexpr size_t kAlign = 64;
  size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  void* ptr = std::aligned_alloc(kAlign, rounded == 0 ? kAlign : rounded);
  if (ptr == nullptr) {
    throw OutOfMemoryError(detail::Concat("out of host memory allocating ", bytes, " bytes"));
  }
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(ptr), [](uint8_t* p) { std::free(p); });
}

std::shared_ptr<uint8_t> AllocateOn(Device device, size_t bytes) {
  if (device.type == DeviceType::kCPU) return AllocateAligned(bytes);
  return GetDeviceBackend(device.type).allocate(bytes, device.index);
}

std::shared_ptr<uint8_t> AllocateHostForTransfer(size_t bytes) {
  if (CudaDeviceCount() > 0) return GetDeviceBackend(DeviceType::kCUDA).allocate_pinned(bytes);
  return AllocateAligned(bytes);
}

std::unique_ptr<ContextBase> MakeContext(Device device, uint64_t seed, int threads) {
  if (device.type == DeviceType::kCPU) return std::make_unique<CPUContext>(seed, threads);
  return GetDeviceBackend(device.type).make_context(device.index, seed);
}

void CopyBytes(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  if (bytes == 0) return;
  if (dst_device.type == DeviceType::kCPU && src_device.type == DeviceType::kCPU) {
    std::memcpy(dst, src, bytes);
    return;
  }
  const DeviceType gpu = dst_device.type != DeviceType::kCPU ? dst_device.type : src_device.type;
  GetDeviceBackend(gpu).copy(dst, dst_device, src, src_device, bytes);
}

}  // namespace crossbow
