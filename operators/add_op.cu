#include "operators/add_op_cuda.h"
#include "operators/cuda_launch.cuh"

namespace crossbow::cuda {
namespace {

template <bool kRelu>
__global__ void AddKernel(const float* a, const float* b, float* out, int64_t n) {
  CUDA_KERNEL_LOOP(i, n) {
    const float sum = a[i] + b[i];
    out[i] = kRelu ? fmaxf(sum, 0.f) : sum;
  }
}

}  // namespace

void LaunchAdd(const float* a, const float* b, float* out, int64_t n, bool relu,
               cudaStream_t stream) {
  (relu ? AddKernel<true> : AddKernel<false>)<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
      a, b, out, n);
}

}  // namespace crossbow::cuda
