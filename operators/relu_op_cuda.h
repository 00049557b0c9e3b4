#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// y = x < 0 ? 0 : x over n floats (a NaN passes); y may be x.
void LaunchRelu(const float* x, int64_t n, float* y, cudaStream_t stream);
// dx = y > 0 ? dy : 0 over n floats.
void LaunchReluGradient(const float* y, const float* dy, int64_t n, float* dx, cudaStream_t stream);

}  // namespace crossbow::cuda
