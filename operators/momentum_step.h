#pragma once

// The two conventions of momentum SGD, shared by the CPU and CUDA kernels (no dependencies, so
// that nvcc reads it). Both take g = grad + weight_decay * param; then
//   caffe2:  v = momentum * v - lr * g;  param += v  (Nesterov: param += momentum * v - lr * g)
//   pytorch: v = momentum * v + g;  param -= lr * v  (Nesterov: param -= lr * (g + momentum * v))
// They take the same steps while lr is constant (caffe2's v is -lr times pytorch's) and part
// when it changes: caffe2's velocity keeps the old rate's steps, pytorch's rescales them.
#include "operators/host_device.h"

namespace crossbow {

// One step is v = momentum * v + c * g; param += s * (a * v + b * g), so that one branch-free
// loop serves all four cases.
struct MomentumCoefficients {
  float c, s, a, b;
};

// caffe2's s = 1 and c = b = -lr give back m v - lr g and a v - lr g bit for bit; pytorch's
// s = -lr multiplies the sum, as torch.optim.SGD's param.add_(d_p, alpha=-lr) does.
CROSSBOW_HOST_DEVICE inline MomentumCoefficients MomentumCoefficientsFor(bool pytorch,
                                                                         bool nesterov,
                                                                         float momentum, float lr) {
  const float a = nesterov ? momentum : 1.f;
  if (pytorch) return {1.f, -lr, a, nesterov ? 1.f : 0.f};
  return {-lr, 1.f, a, nesterov ? -lr : 0.f};
}

}  // namespace crossbow
