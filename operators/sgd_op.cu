#include "operators/cuda_launch.cuh"
#include "operators/momentum_step.h"
#include "operators/sgd_op_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void MomentumSGDKernel(float* param, float* velocity, const float* grad, const float* lr,
                                  int64_t n, float momentum, float weight_decay, bool nesterov,
                                  bool pytorch) {
  const MomentumCoefficients k = MomentumCoefficientsFor(pytorch, nesterov, momentum, *lr);
  CUDA_KERNEL_LOOP(i, n) {
    const float g = grad[i] + weight_decay * param[i];
    const float v = momentum * velocity[i] + k.c * g;
    velocity[i] = v;
    param[i] += k.s * (k.a * v + k.b * g);
  }
}

}  // namespace

void LaunchMomentumSGD(float* param, float* velocity, const float* grad, const float* lr, int64_t n,
                       float momentum, float weight_decay, bool nesterov, bool pytorch,
                       cudaStream_t stream) {
  MomentumSGDKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
      param, velocity, grad, lr, n, momentum, weight_decay, nesterov, pytorch);
}

}  // namespace crossbow::cuda
