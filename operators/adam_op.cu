#include "operators/adam_op_cuda.h"
#include "operators/adam_step.h"
#include "operators/cuda_launch.cuh"
#include "operators/step_count_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void AdamWKernel(float* param, float* exp_avg, float* exp_avg_sq, const float* step,
                            const float* grad, const float* lr, const float* beta1_now, int64_t n,
                            double beta1, double beta2, double eps, double weight_decay,
                            bool rectify, bool corrected_eps) {
  const AdamCoefficients k =
      AdamCoefficientsFor(*step + 1.f, *lr, beta1_now != nullptr ? *beta1_now : beta1, beta2, eps,
                          weight_decay, rectify, corrected_eps);
  CUDA_KERNEL_LOOP(i, n) { AdamElement(k, grad[i], param + i, exp_avg + i, exp_avg_sq + i); }
}

}  // namespace

void LaunchAdamW(float* param, float* exp_avg, float* exp_avg_sq, float* step, const float* grad,
                 const float* lr, const float* beta1_now, int64_t n, double beta1, double beta2,
                 double eps, double weight_decay, bool rectify, bool corrected_eps,
                 cudaStream_t stream) {
  AdamWKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(param, exp_avg, exp_avg_sq, step, grad,
                                                             lr, beta1_now, n, beta1, beta2, eps,
                                                             weight_decay, rectify, corrected_eps);
  LaunchCountStep(step, stream);
}

}  // namespace crossbow::cuda
