#include "operators/adam_op_cuda.h"
#include "operators/adam_step.h"
#include "operators/cuda_launch.cuh"
#include "operators/step_count_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void AdamWKernel(float* param, float* exp_avg, float* exp_avg_sq, const float* step,
                            const float* grad, const float* lr, int64_t n, double beta1,
                            double beta2, double eps, double weight_decay, bool rectify) {
  const AdamCoefficients k =
      AdamCoefficientsFor(*step + 1.f, *lr, beta1, beta2, eps, weight_decay, rectify);
  CUDA_KERNEL_LOOP(i, n) { AdamElement(k, grad[i], param + i, exp_avg + i, exp_avg_sq + i); }
}

}  // namespace

void LaunchAdamW(float* param, float* exp_avg, float* exp_avg_sq, float* step, const float* grad,
                 const float* lr, int64_t n, double beta1, double beta2, double eps,
                 double weight_decay, bool rectify, cudaStream_t stream) {
  AdamWKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
      param, exp_avg, exp_avg_sq, step, grad, lr, n, beta1, beta2, eps, weight_decay, rectify);
  LaunchCountStep(step, stream);
}

}  // namespace crossbow::cuda
