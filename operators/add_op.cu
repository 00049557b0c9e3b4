#include "operators/add_op_cuda.h"
#include "operators/cuda_launch.cuh"

namespace crossbow::cuda {
namespace {

__global__ void AddKernel(const float* a, const float* b, float* out, int64_t n) {
  CUDA_KERNEL_LOOP(i, n) { out[i] = a[i] + b[i]; }
}

}  // namespace

void LaunchAdd(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  AddKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(a, b, out, n);
}

}  // namespace crossbow::cuda
