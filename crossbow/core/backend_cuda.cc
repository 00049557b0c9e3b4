// The CUDA device backend: a caching allocator for GPU memory, page-locked host memory,
// copies and contexts. Registered with core at load time (device_backend.h).
#include <glog/logging.h>

#include <map>
#include <mutex>
#include <tuple>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/context_cuda.h"
#include "crossbow/core/device_backend.h"

namespace crossbow {
namespace cuda {
namespace {

thread_local cudaStream_t current_stream = nullptr;

// Freed blocks are kept per (GPU, stream) and reused only for allocations on the same stream,
// so that reuse is ordered by that stream and never races with work still queued on another.
// cudaMalloc/cudaFree synchronise the device; after the first iterations (and the memory
// plan) a learner allocates nothing.
class CachingAllocator {
 public:
  std::shared_ptr<uint8_t> Allocate(size_t bytes, int gpu) {
    const size_t size = RoundUp(bytes);
    const cudaStream_t stream = current_stream;
    void* ptr = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& pool = free_[{gpu, stream}];
      auto it = pool.lower_bound(size);
      // A cached block at most twice the request, so that small tensors do not pin big blocks.
      if (it != pool.end() && it->first <= 2 * size) {
        ptr = it->second;
        sizes_[ptr] = it->first;
        pool.erase(it);
      }
    }
    if (ptr == nullptr) ptr = Malloc(size, gpu, bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_[gpu] += sizes_[ptr];
    return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(ptr), [this, gpu, stream](uint8_t* p) {
      std::lock_guard<std::mutex> lock(mutex_);
      const size_t block = sizes_[p];
      in_use_[gpu] -= block;
      free_[{gpu, stream}].emplace(block, p);
    });
  }

  std::pair<size_t, size_t> Stats(int gpu) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t cached = 0;
    for (const auto& [key, pool] : free_) {
      if (std::get<0>(key) != gpu) continue;
      for (const auto& [size, ptr] : pool) cached += size;
    }
    return {in_use_[gpu], cached};
  }

 private:
  static size_t RoundUp(size_t bytes) {
    constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
    const size_t unit = bytes < kLarge ? kSmall : kLarge;
    return std::max(unit, (bytes + unit - 1) / unit * unit);
  }

  void* Malloc(size_t size, int gpu, size_t requested) {
    CUDA_CHECK(cudaSetDevice(gpu));
    void* ptr = nullptr;
    if (cudaMalloc(&ptr, size) != cudaSuccess) {
      cudaGetLastError();
      ReleaseCached(gpu);
      const cudaError_t error = cudaMalloc(&ptr, size);
      if (error != cudaSuccess) {
        cudaGetLastError();
        const auto [free, total] = MemoryInfo(gpu);
        const auto [in_use, cached] = Stats(gpu);
        throw OutOfMemoryError(detail::Concat(
            "out of memory on cuda:", gpu, " allocating ", requested, " bytes (",
            cudaGetErrorString(error), "); the GPU has ", free >> 20, " MiB free of ", total >> 20,
            " MiB, Crossbow holds ", in_use >> 20, " MiB in use"));
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[ptr] = size;
    return ptr;
  }

  // Gives every cached block of `gpu` back to the driver (before retrying a failed cudaMalloc).
  void ReleaseCached(int gpu) {
    std::lock_guard<std::mutex> lock(mutex_);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (auto& [key, pool] : free_) {
      if (std::get<0>(key) != gpu) continue;
      for (const auto& [size, ptr] : pool) {
        cudaFree(ptr);
        sizes_.erase(ptr);
      }
      pool.clear();
    }
  }

  std::mutex mutex_;
  std::map<std::tuple<int, cudaStream_t>, std::multimap<size_t, void*>> free_;
  std::map<void*, size_t> sizes_;  // every block's rounded size
  std::map<int, size_t> in_use_;
};

// Never destroyed: tensors freed at exit must not reach a destroyed allocator.
CachingAllocator& Allocator() {
  static auto* allocator = new CachingAllocator();
  return *allocator;
}

int DeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // no driver or no GPU: not an error here
    return 0;
  }
  return count;
}

std::shared_ptr<uint8_t> AllocatePinned(size_t bytes) {
  void* ptr = nullptr;
  CUDA_CHECK(cudaHostAlloc(&ptr, std::max<size_t>(bytes, 64), cudaHostAllocPortable), "allocating ",
             bytes, " bytes of page-locked host memory");
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(ptr), [](uint8_t* p) { cudaFreeHost(p); });
}

// On a thread that bound a context: ordered after the work on its stream (the engine orders
// other streams' work with events). On any other thread (checkpoints, Python's fetches): after
// all work on the GPU, since the legacy default stream does not wait for non-blocking streams.
void Copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) {
  const Device gpu = dst_device.type == DeviceType::kCUDA ? dst_device : src_device;
  CUDA_CHECK(cudaSetDevice(gpu.index));
  const cudaStream_t stream = current_stream;
  if (stream == nullptr) CUDA_CHECK(cudaDeviceSynchronize(), "before a copy on ", gpu.ToString());
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "copying ", bytes,
             " bytes from ", src_device.ToString(), " to ", dst_device.ToString());
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

const bool registered = RegisterDeviceBackend(
    DeviceType::kCUDA,
    DeviceBackend{[](size_t bytes, int gpu) { return Allocator().Allocate(bytes, gpu); }, Copy,
                  AllocatePinned, DeviceCount,
                  [](int gpu, uint64_t seed) -> std::unique_ptr<ContextBase> {
                    return std::make_unique<CUDAContext>(gpu, seed);
                  }});

}  // namespace

cudaStream_t CurrentStream() { return current_stream; }
void SetCurrentStream(cudaStream_t stream) { current_stream = stream; }

std::pair<size_t, size_t> MemoryInfo(int gpu) {
  CUDA_CHECK(cudaSetDevice(gpu));
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  return {free, total};
}

std::pair<size_t, size_t> AllocatorStats(int gpu) { return Allocator().Stats(gpu); }

}  // namespace cuda
}  // namespace crossbow
