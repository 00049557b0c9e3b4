#include "operators/cuda_launch.cuh"
#include "operators/spectral_norm_op_cuda.h"

namespace crossbow::cuda {
namespace {

// The sum of every thread's `value` in the block, returned to all of them (a tree in shared
// memory, in a fixed order).
__device__ float BlockSum(float value) {
  __shared__ float partial[kThreadsPerBlock];
  __syncthreads();  // a previous call's readers are done
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  return partial[0];
}

// out = W^T x (transpose) or W x, then out /= max(|out|, epsilon).
__device__ void MultiplyAndNormalize(const float* w, int64_t rows, int64_t cols, bool transpose,
                                     const float* x, float epsilon, float* out) {
  const int64_t n = transpose ? cols : rows, inner = transpose ? rows : cols;
  float squares = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    float sum = 0.f;
    for (int64_t j = 0; j < inner; ++j)
      sum += (transpose ? w[j * cols + i] : w[i * cols + j]) * x[j];
    out[i] = sum;
    squares += sum * sum;
  }
  const float norm = fmaxf(sqrtf(BlockSum(squares)), epsilon);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) out[i] /= norm;
  __syncthreads();
}

__global__ void PowerIterationKernel(const float* w, int64_t rows, int64_t cols, int64_t iterations,
                                     float epsilon, float* u, float* v) {
  for (int64_t it = 0; it < iterations; ++it) {
    MultiplyAndNormalize(w, rows, cols, true, u, epsilon, v);
    MultiplyAndNormalize(w, rows, cols, false, v, epsilon, u);
  }
}

__global__ void SigmaKernel(const float* w, const float* dy, int64_t rows, int64_t cols,
                            const float* u, const float* v, float* scalars) {
  float uwv = 0.f, uu = 0.f, vv = 0.f, dot = 0.f;
  for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    float row = 0.f;
    for (int64_t c = 0; c < cols; ++c) {
      row += w[r * cols + c] * v[c];
      if (dy != nullptr) dot += dy[r * cols + c] * w[r * cols + c];
    }
    uwv += row * u[r];
    uu += u[r] * u[r];
  }
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) vv += v[c] * v[c];
  const float norms = sqrtf(BlockSum(uu)) * sqrtf(BlockSum(vv));
  const float sigma = BlockSum(uwv) / norms;
  dot = BlockSum(dot);
  if (threadIdx.x == 0) {
    scalars[0] = sigma;
    if (dy != nullptr) scalars[1] = dot / (sigma * sigma * norms);
  }
}

__global__ void ScaleKernel(const float* w, int64_t n, const float* scalars, float* y) {
  const float sigma = scalars[0];
  CUDA_KERNEL_LOOP(i, n) { y[i] = w[i] / sigma; }
}

__global__ void GradientKernel(const float* dy, int64_t rows, int64_t cols, const float* u,
                               const float* v, const float* scalars, float* dw) {
  const float sigma = scalars[0], coef = scalars[1];
  CUDA_KERNEL_LOOP(i, rows * cols) { dw[i] = dy[i] / sigma - coef * u[i / cols] * v[i % cols]; }
}

}  // namespace

void LaunchPowerIteration(const float* w, int64_t rows, int64_t cols, int64_t iterations,
                          float epsilon, float* u, float* v, cudaStream_t stream) {
  PowerIterationKernel<<<1, kThreadsPerBlock, 0, stream>>>(w, rows, cols, iterations, epsilon, u,
                                                           v);
}

void LaunchSpectralSigma(const float* w, const float* dy, int64_t rows, int64_t cols,
                         const float* u, const float* v, float* scalars, cudaStream_t stream) {
  SigmaKernel<<<1, kThreadsPerBlock, 0, stream>>>(w, dy, rows, cols, u, v, scalars);
}

void LaunchSpectralScale(const float* w, int64_t n, const float* scalars, float* y,
                         cudaStream_t stream) {
  ScaleKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(w, n, scalars, y);
}

void LaunchSpectralGradient(const float* dy, int64_t rows, int64_t cols, const float* u,
                            const float* v, const float* scalars, float* dw, cudaStream_t stream) {
  GradientKernel<<<BlocksFor(rows * cols), kThreadsPerBlock, 0, stream>>>(dy, rows, cols, u, v,
                                                                          scalars, dw);
}

}  // namespace crossbow::cuda
