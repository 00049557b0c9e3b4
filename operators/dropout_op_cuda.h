#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// y = keep ? x * scale : 0 and mask = keep (1 or 0; mask may be null) over n floats, where a
// unit is kept when its random 32-bit word reaches `threshold` (as on the CPU). The words come
// from (seed, *offset): the offset is read on the device, and advanced after the kernel.
void LaunchDropout(const float* x, float* y, float* mask, int64_t n, uint32_t threshold,
                   float scale, uint64_t seed, unsigned long long* offset, cudaStream_t stream);
// dx = dy * mask * scale over n floats; dx may be dy.
void LaunchDropoutGradient(const float* dy, const float* mask, float* dx, int64_t n, float scale,
                           cudaStream_t stream);

}  // namespace crossbow::cuda
