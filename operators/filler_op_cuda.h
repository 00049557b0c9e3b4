#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// out[i] = value over n floats.
void LaunchFillConstant(float* out, int64_t n, float value, cudaStream_t stream);
// Uniform in [min, max) and normal(mean, std), from (seed, *offset): the offset is read on the
// device and advanced after the kernel, so that every run draws new numbers.
void LaunchFillUniform(float* out, int64_t n, float min, float max, uint64_t seed,
                       unsigned long long* offset, cudaStream_t stream);
void LaunchFillNormal(float* out, int64_t n, float mean, float std, uint64_t seed,
                      unsigned long long* offset, cudaStream_t stream);

}  // namespace crossbow::cuda
