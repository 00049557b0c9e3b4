#include <cmath>

#include "crossbow/core/top_k.h"
#include "operators/accuracy_op_cuda.h"
#include "operators/cuda_launch.cuh"

namespace crossbow::cuda {
namespace {

// One block: each thread counts the hits of its rows, then the block adds them up. Accuracy
// runs once per batch on a few hundred rows, so one block is plenty and needs no second pass.
__global__ void TopKAccuracyKernel(const float* scores, const int32_t* labels, int64_t n, int64_t c,
                                   int64_t top_k, float* accuracy) {
  __shared__ unsigned long long hits[kThreadsPerBlock];
  __shared__ int bad_label;
  if (threadIdx.x == 0) bad_label = 0;
  __syncthreads();
  unsigned long long mine = 0;
  for (int64_t r = threadIdx.x; r < n; r += blockDim.x) {
    const int32_t label = labels[r];
    if (label < 0 || label >= c) {
      bad_label = 1;
      continue;
    }
    mine += IsTopKHit(scores + r * c, c, label, top_k) ? 1 : 0;
  }
  hits[threadIdx.x] = mine;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) hits[threadIdx.x] += hits[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *accuracy = bad_label ? NAN : static_cast<float>(hits[0]) / static_cast<float>(n);
  }
}

}  // namespace

void LaunchTopKAccuracy(const float* scores, const int32_t* labels, int64_t n, int64_t c,
                        int64_t top_k, float* accuracy, cudaStream_t stream) {
  TopKAccuracyKernel<<<1, kThreadsPerBlock, 0, stream>>>(scores, labels, n, c, top_k, accuracy);
}

}  // namespace crossbow::cuda
