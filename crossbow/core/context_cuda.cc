#include "crossbow/core/context_cuda.h"

#include <glog/logging.h>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/device_backend.h"

namespace crossbow {
namespace {

class CudaGraph final : public CapturedWork {
 public:
  CudaGraph(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~CudaGraph() override { cudaGraphExecDestroy(exec_); }
  void Replay() override { CUDA_CHECK(cudaGraphLaunch(exec_, stream_), "replaying a CUDA graph"); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

// The oldest compute capability this build carries code for (CMAKE_CUDA_ARCHITECTURES: real
// code for 9.0 and PTX that newer GPUs compile at load time).
constexpr int kMinComputeCapability = 90;

}  // namespace

CUDAContext::CUDAContext(int gpu, uint64_t seed) : gpu_(gpu), seed_(seed) {
  const int count = CudaDeviceCount();
  CROSSBOW_ENFORCE_VALUE(count > 0, "device cuda:", gpu,
                         " was asked for but no GPU is usable here (no NVIDIA driver or GPU)");
  CROSSBOW_ENFORCE_VALUE(gpu >= 0 && gpu < count, "device cuda:", gpu, " does not exist; ",
                         "this machine has ", count, " GPU(s), cuda:0 to cuda:", count - 1);
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, gpu));
  const int capability = prop.major * 10 + prop.minor;
  CROSSBOW_ENFORCE_VALUE(capability >= kMinComputeCapability, "cuda:", gpu, " (", prop.name,
                         ") has compute capability ", prop.major, ".", prop.minor,
                         "; this build needs ", kMinComputeCapability / 10, ".",
                         kMinComputeCapability % 10,
                         " or newer (rebuild with -DCMAKE_CUDA_ARCHITECTURES=", capability, ")");
  CUDA_CHECK(cudaSetDevice(gpu));
  const cudaStream_t caller_stream = cuda::CurrentStream();
  try {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CreateLibraryHandles();
    set_precision(Precision::kFP32);
    cuda::SetCurrentStream(stream_);  // the block belongs to this context's stream
    cublas_workspace_ = AllocateOn(device(), kCublasWorkspaceBytes);
    cuda::SetCurrentStream(caller_stream);
    CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.get(), kCublasWorkspaceBytes));
    CUDA_CHECK(cudaMalloc(&random_offset_, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemsetAsync(random_offset_, 0, sizeof(unsigned long long), stream_));
  } catch (...) {  // a learner that does not fit must leave nothing behind
    Release();
    cuda::SetCurrentStream(caller_stream);
    throw;
  }
}

void CUDAContext::set_precision(Precision precision) {
  ContextBase::set_precision(precision);
  // In fp32 results must match the CPU to 1e-4: no TF32 in cuBLAS (cuDNN's convolutions are
  // set per descriptor by the operators). The reduced precisions run matrix products in TF32:
  // they are a small part of the nets' work, and TF32 needs neither converted copies nor, as
  // fp16 would, scaling.
  CUBLAS_CHECK(cublasSetMathMode(
      cublas_, precision == Precision::kFP32 ? CUBLAS_PEDANTIC_MATH : CUBLAS_TF32_TENSOR_OP_MATH));
}

// cuDNN and cuBLAS take their memory from the driver. On a full GPU cudnnCreate has been seen
// to fail with CUDNN_STATUS_INTERNAL_ERROR, not an allocation failure (H200, cuDNN 9.14), so a
// handle that cannot be made with little memory free is reported as out of memory: the
// autotuner takes that as "this learner does not fit", any other error as a fault.
void CUDAContext::CreateLibraryHandles() {
  try {
    CUDNN_CHECK(cudnnCreate(&cudnn_));
    CUDNN_CHECK(cudnnSetStream(cudnn_, stream_));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  } catch (const OutOfMemoryError&) {
    throw;
  } catch (const Error& e) {
    constexpr size_t kLibraryHeadroomBytes = size_t{256} << 20;
    const size_t free = cuda::MemoryInfo(gpu_).first;
    if (free >= kLibraryHeadroomBytes) throw;
    throw OutOfMemoryError(detail::Concat(e.what(), ", with ", free >> 20,
                                          " MiB free on cuda:", gpu_, ": taken as out of memory"));
  }
}

CUDAContext::~CUDAContext() { Release(); }

void CUDAContext::Release() {
  cudaSetDevice(gpu_);
  if (stream_) cudaStreamSynchronize(stream_);
  // A thread that bound this context would otherwise go on copying on a destroyed stream (the
  // caller's thread, say, fetching weights after its engine is gone).
  if (stream_ && cuda::CurrentStream() == stream_) cuda::SetCurrentStream(nullptr);
  scratch_.clear();
  cublas_workspace_.reset();
  if (random_offset_) cudaFree(random_offset_);
  if (cublas_) cublasDestroy(cublas_);
  if (cudnn_) cudnnDestroy(cudnn_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CUDAContext::BindThread() const {
  CUDA_CHECK(cudaSetDevice(gpu_));
  cuda::SetCurrentStream(stream_);
}

std::unique_ptr<CapturedWork> CUDAContext::Capture(const std::function<void()>& body) {
  BindThread();
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    body();
  } catch (...) {
    cudaStreamEndCapture(stream_, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
  if (ended != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    LOG(WARNING) << "cuda:" << gpu_ << ": a net could not be captured as a CUDA graph ("
                 << cudaGetErrorString(ended) << "); it runs operator by operator";
    return nullptr;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (instantiated != cudaSuccess) {
    cudaGetLastError();
    LOG(WARNING) << "cuda:" << gpu_ << ": a CUDA graph could not be instantiated ("
                 << cudaGetErrorString(instantiated) << "); the net runs operator by operator";
    return nullptr;
  }
  return std::make_unique<CudaGraph>(exec, stream_);
}

void CUDAContext::Synchronize() {
  CUDA_CHECK(cudaStreamSynchronize(stream_), "waiting for the work on cuda:", gpu_);
}

void* CUDAContext::Scratch(size_t bytes) {
  if (bytes > scratch_bytes_) {
    BindThread();
    scratch_.push_back(AllocateOn(device(), bytes));
    scratch_bytes_ = bytes;
    scratch_held_ += bytes;
  }
  return scratch_.empty() ? nullptr : scratch_.back().get();
}

size_t CUDAContext::HeldBytes() const { return kCublasWorkspaceBytes + scratch_held_; }

void CUDAContext::Copy(void* dst, const void* src, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "copying ", bytes,
             " bytes on cuda:", gpu_);
}

}  // namespace crossbow
