#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// out = a + b over n floats, or max(a + b, 0) with `relu`; out may be a or b.
void LaunchAdd(const float* a, const float* b, float* out, int64_t n, bool relu,
               cudaStream_t stream);

}  // namespace crossbow::cuda
