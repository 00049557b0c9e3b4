#include "crossbow/core/check_cuda.h"

namespace crossbow::cuda {
namespace {

std::string Message(const char* library, const char* text, const char* call, const char* file,
                    int line, const std::string& context) {
  return detail::Concat(context.empty() ? "" : context + ": ", library, " error '", text, "' in ",
                        call, " (", file, ":", line, ")");
}

}  // namespace

void FailCuda(cudaError_t error, const char* call, const char* file, int line,
              const std::string& context) {
  cudaGetLastError();  // clears a non-sticky error so that the caller can fall back
  const std::string message = Message("CUDA", cudaGetErrorString(error), call, file, line, context);
  if (error == cudaErrorMemoryAllocation) throw OutOfMemoryError(message);
  throw Error(message);
}

void FailCudnn(cudnnStatus_t status, const char* call, const char* file, int line,
               const std::string& context) {
  const std::string message =
      Message("cuDNN", cudnnGetErrorString(status), call, file, line, context);
  if (status == CUDNN_STATUS_ALLOC_FAILED) throw OutOfMemoryError(message);
  throw Error(message);
}

void FailCublas(cublasStatus_t status, const char* call, const char* file, int line,
                const std::string& context) {
  const std::string message =
      Message("cuBLAS", cublasGetStatusString(status), call, file, line, context);
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemoryError(message);
  throw Error(message);
}

}  // namespace crossbow::cuda
