#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <memory>
#include <vector>

#include "crossbow/core/context.h"

namespace crossbow {

// A learner's place on a GPU: its own stream (non-blocking, so learners on one GPU overlap),
// cuDNN and cuBLAS handles bound to that stream, scratch memory for library workspaces and
// the state of its random numbers. Not shared between threads.
class CUDAContext final : public ContextBase {
 public:
  // Throws, naming the GPU and the reason, when `gpu` does not exist or its compute capability
  // is below what this build carries code for.
  explicit CUDAContext(int gpu = 0, uint64_t seed = 0);
  ~CUDAContext() override;
  CUDAContext(const CUDAContext&) = delete;
  CUDAContext& operator=(const CUDAContext&) = delete;

  Device device() const override { return Device{DeviceType::kCUDA, gpu_}; }
  int gpu() const { return gpu_; }
  // Makes `gpu` current on the calling thread and tells the caching allocator that this
  // thread's allocations are used on stream().
  void BindThread() const override;
  // A CUDA graph of the work `body` issues on stream(); nullptr (and a logged reason) when the
  // work cannot be captured.
  std::unique_ptr<CapturedWork> Capture(const std::function<void()>& body) override;
  void Synchronize() override;
  // fp32 keeps cuBLAS pedantic; every other precision lets it use TF32 tensor cores.
  void set_precision(Precision precision) override;

  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  // Scratch memory of at least `bytes` on this GPU, for one library call. Earlier, smaller
  // scratch buffers stay allocated, so that recorded graphs that use them stay valid.
  void* Scratch(size_t bytes);
  // Asynchronous, on stream() (host memory should be page-locked to overlap with compute).
  void Copy(void* dst, const void* src, size_t bytes) override;
  // The cuBLAS workspace and every scratch buffer kept.
  size_t HeldBytes() const override;

  // Random numbers: a kernel derives its values from (seed(), *random_offset(), thread) with a
  // counter-based generator and advances the offset on the device, so that a replayed graph
  // draws new numbers every time.
  uint64_t seed() const { return seed_; }
  unsigned long long* random_offset() const { return random_offset_; }

 private:
  void CreateLibraryHandles();
  void Release();  // what the constructor made so far, and everything else

  int gpu_;
  uint64_t seed_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  unsigned long long* random_offset_ = nullptr;
  // cuBLAS would otherwise take its workspace from a pool of its own, which a CUDA graph capture
  // may not allocate from; 32 MiB is what cuBLAS asks for on Hopper.
  static constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;
  std::shared_ptr<uint8_t> cublas_workspace_;
  std::vector<std::shared_ptr<uint8_t>> scratch_;  // the last is the largest
  size_t scratch_bytes_ = 0;
  size_t scratch_held_ = 0;  // all of scratch_
};

namespace cuda {
// The stream that the calling thread's context bound (nullptr: none bound).
cudaStream_t CurrentStream();
void SetCurrentStream(cudaStream_t stream);
// Free and total bytes of GPU `gpu` (cudaMemGetInfo).
std::pair<size_t, size_t> MemoryInfo(int gpu);
// Bytes the caching allocator holds for `gpu`: in use and cached for reuse.
std::pair<size_t, size_t> AllocatorStats(int gpu);
}  // namespace cuda

}  // namespace crossbow
