#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// *accuracy = the fraction of the n rows of scores [n, c] whose label has fewer than top_k
// classes scoring strictly higher; NaN when a label lies outside [0, c) (the device cannot
// raise an error).
void LaunchTopKAccuracy(const float* scores, const int32_t* labels, int64_t n, int64_t c,
                        int64_t top_k, float* accuracy, cudaStream_t stream);

}  // namespace crossbow::cuda
