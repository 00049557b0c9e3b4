#include "operators/cuda_launch.cuh"
#include "operators/lookahead_op_cuda.h"
#include "operators/step_count_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void LookaheadKernel(float* param, float* slow, const float* step, int64_t n, int64_t k,
                                float alpha) {
  if (static_cast<int64_t>(*step + 1.f) % k != 0) return;
  CUDA_KERNEL_LOOP(i, n) {
    slow[i] += alpha * (param[i] - slow[i]);
    param[i] = slow[i];
  }
}

}  // namespace

void LaunchLookahead(float* param, float* slow, float* step, int64_t n, int64_t k, float alpha,
                     cudaStream_t stream) {
  LookaheadKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(param, slow, step, n, k, alpha);
  LaunchCountStep(step, stream);
}

}  // namespace crossbow::cuda
