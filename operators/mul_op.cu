#include "operators/cuda_launch.cuh"
#include "operators/mul_op_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void MulKernel(broadcast::Layout l, const float* a, const float* b, float* y) {
  CUDA_KERNEL_LOOP(i, l.a_numel) { y[i] = a[i] * b[broadcast::BOffset(l, i)]; }
}

// One block per element j of B: each thread sums a strided share, then a tree in shared memory.
__global__ void MulBGradientKernel(broadcast::Layout l, const float* a, const float* dy,
                                   float* db) {
  __shared__ float partial[kThreadsPerBlock];
  const int64_t j = blockIdx.x, shared = l.a_numel / l.b_numel;
  float sum = 0.f;
  for (int64_t k = threadIdx.x; k < shared; k += blockDim.x) {
    const int64_t i = broadcast::AOffset(l, j, k);
    sum += dy[i] * a[i];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[j] = partial[0];
}

}  // namespace

void LaunchMul(const broadcast::Layout& l, const float* a, const float* b, float* y,
               cudaStream_t stream) {
  MulKernel<<<BlocksFor(l.a_numel), kThreadsPerBlock, 0, stream>>>(l, a, b, y);
}

void LaunchMulGradient(const broadcast::Layout& l, const float* a, const float* b, const float* dy,
                       float* da, float* db, cudaStream_t stream) {
  if (da != nullptr) MulKernel<<<BlocksFor(l.a_numel), kThreadsPerBlock, 0, stream>>>(l, dy, b, da);
  if (db != nullptr && l.b_numel > 0) {
    MulBGradientKernel<<<static_cast<unsigned>(l.b_numel), kThreadsPerBlock, 0, stream>>>(l, a, dy,
                                                                                          db);
  }
}

}  // namespace crossbow::cuda
