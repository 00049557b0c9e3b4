#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// *accuracy = the fraction of the n rows of scores [n, c] that IsTopKHit (core/top_k.h)
// counts as hits; NaN when a label lies outside [0, c) (the device cannot raise an error).
void LaunchTopKAccuracy(const float* scores, const int32_t* labels, int64_t n, int64_t c,
                        int64_t top_k, float* accuracy, cudaStream_t stream);

}  // namespace crossbow::cuda
