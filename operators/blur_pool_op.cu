#include "operators/blur_pool.h"
#include "operators/blur_pool_op_cuda.h"
#include "operators/cuda_launch.cuh"

namespace crossbow::cuda {
namespace {

__global__ void BlurPoolKernel(const float* x, int64_t planes, int64_t h, int64_t w, int64_t s,
                               float* y) {
  const int64_t oh = blur::OutSide(h, s), ow = blur::OutSide(w, s);
  CUDA_KERNEL_LOOP(k, planes * oh * ow) {
    const int64_t p = k / (oh * ow), i = k / ow % oh, j = k % ow;
    y[k] = blur::Output(x + p * h * w, h, w, s, i, j);
  }
}

__global__ void BlurPoolGradientKernel(const float* dy, int64_t planes, int64_t h, int64_t w,
                                       int64_t s, float* dx) {
  const int64_t out_plane = blur::OutSide(h, s) * blur::OutSide(w, s);
  CUDA_KERNEL_LOOP(k, planes * h * w) {
    const int64_t p = k / (h * w), y = k / w % h, c = k % w;
    dx[k] = blur::InputGradient(dy + p * out_plane, h, w, s, y, c);
  }
}

}  // namespace

void LaunchBlurPool(const float* x, int64_t planes, int64_t h, int64_t w, int64_t stride, float* y,
                    cudaStream_t stream) {
  const int64_t n = planes * blur::OutSide(h, stride) * blur::OutSide(w, stride);
  BlurPoolKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(x, planes, h, w, stride, y);
}

void LaunchBlurPoolGradient(const float* dy, int64_t planes, int64_t h, int64_t w, int64_t stride,
                            float* dx, cudaStream_t stream) {
  BlurPoolGradientKernel<<<BlocksFor(planes * h * w), kThreadsPerBlock, 0, stream>>>(dy, planes, h,
                                                                                     w, stride, dx);
}

}  // namespace crossbow::cuda
