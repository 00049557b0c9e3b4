#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// One block: `iterations` power-iteration steps on u [rows] and v [cols] in place, W [rows,
// cols] row-major.
void LaunchPowerIteration(const float* w, int64_t rows, int64_t cols, int64_t iterations,
                          float epsilon, float* u, float* v, cudaStream_t stream);
// One block: scalars[0] = sigma = u^T W v / (|u| |v|) and, where dy is not null,
// scalars[1] = <dy, W> / sigma^2 / (|u| |v|).
void LaunchSpectralSigma(const float* w, const float* dy, int64_t rows, int64_t cols,
                         const float* u, const float* v, float* scalars, cudaStream_t stream);
// y = w / scalars[0] over rows * cols floats.
void LaunchSpectralScale(const float* w, int64_t n, const float* scalars, float* y,
                         cudaStream_t stream);
// dw = dy / scalars[0] - scalars[1] u v^T.
void LaunchSpectralGradient(const float* dy, int64_t rows, int64_t cols, const float* u,
                            const float* v, const float* scalars, float* dw, cudaStream_t stream);

}  // namespace crossbow::cuda
