#pragma once

// Kernels of the CUDA BlurPool operators (blur_pool_op.cu), on plain [planes, H, W] floats: the
// arithmetic of blur_pool.h, one thread an element.
#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

void LaunchBlurPool(const float* x, int64_t planes, int64_t h, int64_t w, int64_t stride, float* y,
                    cudaStream_t stream);
void LaunchBlurPoolGradient(const float* dy, int64_t planes, int64_t h, int64_t w, int64_t stride,
                            float* dx, cudaStream_t stream);

}  // namespace crossbow::cuda
