#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// One AdamW/RAdam step over n floats, in place (see AdamWOp): step t = *step + 1 and lr are read
// on the device, so that a recorded graph uses the values of its replay; *step is then
// incremented. A non-null `beta1_now` (one float on the device) replaces beta1.
void LaunchAdamW(float* param, float* exp_avg, float* exp_avg_sq, float* step, const float* grad,
                 const float* lr, const float* beta1_now, int64_t n, double beta1, double beta2,
                 double eps, double weight_decay, bool rectify, bool corrected_eps,
                 cudaStream_t stream);

}  // namespace crossbow::cuda
