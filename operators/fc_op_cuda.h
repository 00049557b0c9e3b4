#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// y[r, c] = b[c] for a row-major [rows, cols] y.
void LaunchBroadcastRows(const float* b, float* y, int64_t rows, int64_t cols, cudaStream_t stream);
// out[c] = sum over r of x[r, c] for a row-major [rows, cols] x.
void LaunchColumnSums(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream);

}  // namespace crossbow::cuda
