#include "operators/cuda_launch.cuh"
#include "operators/spatial_bn_op_cuda.h"

namespace crossbow::cuda {
namespace {

// In double: var + epsilon comes back to within an ulp before epsilon is taken off again; a
// channel of equal values may come out a hair below zero, which is clamped.
__global__ void InvStdToVarianceKernel(const float* inv_std, float epsilon, int64_t c, float* var) {
  CUDA_KERNEL_LOOP(i, c) {
    const double s = inv_std[i];
    var[i] = static_cast<float>(fmax(0.0, 1.0 / (s * s) - static_cast<double>(epsilon)));
  }
}

__global__ void VarianceToInvStdKernel(const float* var, float epsilon, int64_t c, float* inv_std) {
  CUDA_KERNEL_LOOP(i, c) {
    inv_std[i] = static_cast<float>(1.0 / sqrt(static_cast<double>(var[i]) + epsilon));
  }
}

// `v < 0 ? 0 : v` as the Relu kernel, so that a NaN reaches the loss.
__global__ void ReluWithMaskKernel(float* y, int64_t n, uint8_t* mask) {
  CUDA_KERNEL_LOOP(i, n) {
    const float v = y[i];
    y[i] = v < 0.f ? 0.f : v;
    if (mask != nullptr) mask[i] = y[i] > 0.f;
  }
}

__global__ void ApplyMaskKernel(const float* dy, const uint8_t* mask, int64_t n, float* masked) {
  CUDA_KERNEL_LOOP(i, n) { masked[i] = mask[i] ? dy[i] : 0.f; }
}

}  // namespace

void ReluWithMask(float* y, int64_t n, uint8_t* mask, cudaStream_t stream) {
  ReluWithMaskKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(y, n, mask);
}

void ApplyMask(const float* dy, const uint8_t* mask, int64_t n, float* masked,
               cudaStream_t stream) {
  ApplyMaskKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(dy, mask, n, masked);
}

void InvStdToVariance(const float* inv_std, float epsilon, int64_t c, float* var,
                      cudaStream_t stream) {
  InvStdToVarianceKernel<<<BlocksFor(c), kThreadsPerBlock, 0, stream>>>(inv_std, epsilon, c, var);
}

void VarianceToInvStd(const float* var, float epsilon, int64_t c, float* inv_std,
                      cudaStream_t stream) {
  VarianceToInvStdKernel<<<BlocksFor(c), kThreadsPerBlock, 0, stream>>>(var, epsilon, c, inv_std);
}

}  // namespace crossbow::cuda
