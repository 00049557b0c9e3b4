#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "crossbow/core/enforce.h"

namespace crossbow::cuda {

// Throws crossbow::Error (OutOfMemoryError for allocation failures) with the library's own
// error text, the call that failed, where, and `context` (operator, shapes) when given.
[[noreturn]] void FailCuda(cudaError_t error, const char* call, const char* file, int line,
                           const std::string& context);
[[noreturn]] void FailCudnn(cudnnStatus_t status, const char* call, const char* file, int line,
                            const std::string& context);
[[noreturn]] void FailCublas(cublasStatus_t status, const char* call, const char* file, int line,
                             const std::string& context);

}  // namespace crossbow::cuda

// CUDA_CHECK(call) or CUDA_CHECK(call, "what was running", ...): message pieces as in
// CROSSBOW_ENFORCE name the operator and shapes.
#define CUDA_CHECK(call, ...)                                                    \
  do {                                                                           \
    const cudaError_t crossbow_cuda_error = (call);                              \
    if (crossbow_cuda_error != cudaSuccess)                                      \
      ::crossbow::cuda::FailCuda(crossbow_cuda_error, #call, __FILE__, __LINE__, \
                                 ::crossbow::detail::Concat("", ##__VA_ARGS__)); \
  } while (0)

#define CUDNN_CHECK(call, ...)                                                      \
  do {                                                                              \
    const cudnnStatus_t crossbow_cudnn_status = (call);                             \
    if (crossbow_cudnn_status != CUDNN_STATUS_SUCCESS)                              \
      ::crossbow::cuda::FailCudnn(crossbow_cudnn_status, #call, __FILE__, __LINE__, \
                                  ::crossbow::detail::Concat("", ##__VA_ARGS__));   \
  } while (0)

#define CUBLAS_CHECK(call, ...)                                                       \
  do {                                                                                \
    const cublasStatus_t crossbow_cublas_status = (call);                             \
    if (crossbow_cublas_status != CUBLAS_STATUS_SUCCESS)                              \
      ::crossbow::cuda::FailCublas(crossbow_cublas_status, #call, __FILE__, __LINE__, \
                                   ::crossbow::detail::Concat("", ##__VA_ARGS__));    \
  } while (0)
