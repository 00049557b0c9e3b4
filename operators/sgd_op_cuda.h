#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// One momentum SGD step over n floats, in place, in either convention (see MomentumSGDOp); the
// learning rate is read on the device from *lr, so that a recorded graph uses the value the learner
// last wrote.
void LaunchMomentumSGD(float* param, float* velocity, const float* grad, const float* lr, int64_t n,
                       float momentum, float weight_decay, bool nesterov, bool pytorch,
                       cudaStream_t stream);

}  // namespace crossbow::cuda
