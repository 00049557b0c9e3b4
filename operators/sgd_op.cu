#include "operators/cuda_launch.cuh"
#include "operators/sgd_op_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void MomentumSGDKernel(float* param, float* velocity, const float* grad, const float* lr,
                                  int64_t n, float momentum, float weight_decay, bool nesterov) {
  const float rate = *lr;
  // As on the CPU: Nesterov is param += momentum * v - lr * g, classical param += v.
  const float a = nesterov ? momentum : 1.f, b = nesterov ? rate : 0.f;
  CUDA_KERNEL_LOOP(i, n) {
    const float g = grad[i] + weight_decay * param[i];
    const float v = momentum * velocity[i] - rate * g;
    velocity[i] = v;
    param[i] += a * v - b * g;
  }
}

}  // namespace

void LaunchMomentumSGD(float* param, float* velocity, const float* grad, const float* lr, int64_t n,
                       float momentum, float weight_decay, bool nesterov, cudaStream_t stream) {
  MomentumSGDKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
      param, velocity, grad, lr, n, momentum, weight_decay, nesterov);
}

}  // namespace crossbow::cuda
