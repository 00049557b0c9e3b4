#include "operators/cuda_launch.cuh"
#include "operators/relu_op_cuda.h"

namespace crossbow::cuda {
namespace {

// `v < 0 ? 0 : v` rather than fmaxf, so that a NaN reaches the loss instead of vanishing here.
__global__ void ReluKernel(const float* x, int64_t n, float* y) {
  CUDA_KERNEL_LOOP(i, n) {
    const float v = x[i];
    y[i] = v < 0.f ? 0.f : v;
  }
}

__global__ void ReluGradientKernel(const float* y, const float* dy, int64_t n, float* dx) {
  CUDA_KERNEL_LOOP(i, n) { dx[i] = y[i] > 0.f ? dy[i] : 0.f; }
}

}  // namespace

void LaunchRelu(const float* x, int64_t n, float* y, cudaStream_t stream) {
  ReluKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(x, n, y);
}

void LaunchReluGradient(const float* y, const float* dy, int64_t n, float* dx,
                        cudaStream_t stream) {
  ReluGradientKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(y, dy, n, dx);
}

}  // namespace crossbow::cuda
