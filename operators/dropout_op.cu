#include "operators/cuda_launch.cuh"
#include "operators/dropout_op_cuda.h"
#include "operators/random_cuda.cuh"

namespace crossbow::cuda {
namespace {

// One thread per draw of four words, for four consecutive units; y may be x.
__global__ void DropoutKernel(const float* x, float* y, float* mask, int64_t n, uint32_t threshold,
                              float scale, uint64_t seed, const unsigned long long* offset) {
  const uint64_t draw_offset = *offset;
  CUDA_KERNEL_LOOP(group, (n + kElementsPerDraw - 1) / kElementsPerDraw) {
    const RandomWords words = RandomDraw(seed, draw_offset, group);
    for (int k = 0; k < kElementsPerDraw; ++k) {
      const int64_t i = group * kElementsPerDraw + k;
      if (i >= n) break;
      const bool keep = words.v[k] >= threshold;
      y[i] = keep ? x[i] * scale : 0.f;
      if (mask != nullptr) mask[i] = keep ? 1.f : 0.f;
    }
  }
}

__global__ void DropoutGradientKernel(const float* dy, const float* mask, float* dx, int64_t n,
                                      float scale) {
  CUDA_KERNEL_LOOP(i, n) { dx[i] = dy[i] * mask[i] * scale; }
}

}  // namespace

void LaunchDropout(const float* x, float* y, float* mask, int64_t n, uint32_t threshold,
                   float scale, uint64_t seed, unsigned long long* offset, cudaStream_t stream) {
  const int64_t groups = (n + kElementsPerDraw - 1) / kElementsPerDraw;
  DropoutKernel<<<BlocksFor(groups), kThreadsPerBlock, 0, stream>>>(x, y, mask, n, threshold, scale,
                                                                    seed, offset);
  AdvanceRandomOffset(offset, stream);
}

void LaunchDropoutGradient(const float* dy, const float* mask, float* dx, int64_t n, float scale,
                           cudaStream_t stream) {
  DropoutGradientKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(dy, mask, dx, n, scale);
}

}  // namespace crossbow::cuda
