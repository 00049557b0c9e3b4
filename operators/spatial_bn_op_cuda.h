#pragma once

// Kernels of the cuDNN SpatialBN operators (spatial_bn_op.cu): cuDNN keeps the inverse standard
// deviation of a batch where the CPU operators keep its variance, and SpatialBNRelu's ReLU and
// its mask. Launched on `stream`; the caller checks cudaGetLastError().
#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// var[i] = 1 / inv_std[i]^2 - epsilon for i < c: the biased batch variance.
void InvStdToVariance(const float* inv_std, float epsilon, int64_t c, float* var,
                      cudaStream_t stream);
// inv_std[i] = 1 / sqrt(var[i] + epsilon) for i < c.
void VarianceToInvStd(const float* var, float epsilon, int64_t c, float* inv_std,
                      cudaStream_t stream);

// y[i] = max(y[i], 0) in place for i < n, and mask[i] = y[i] > 0 when mask is not null.
void ReluWithMask(float* y, int64_t n, uint8_t* mask, cudaStream_t stream);
// masked[i] = mask[i] ? dy[i] : 0 for i < n.
void ApplyMask(const float* dy, const uint8_t* mask, int64_t n, float* masked, cudaStream_t stream);

}  // namespace crossbow::cuda
