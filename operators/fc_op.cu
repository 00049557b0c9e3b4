#include "operators/cuda_launch.cuh"
#include "operators/fc_op_cuda.h"

namespace crossbow::cuda {
namespace {

__global__ void BroadcastRowsKernel(const float* b, float* y, int64_t rows, int64_t cols) {
  CUDA_KERNEL_LOOP(i, rows * cols) { y[i] = b[i % cols]; }
}

// One thread a column: neighbouring threads read neighbouring floats of each row.
__global__ void ColumnSumsKernel(const float* x, float* out, int64_t rows, int64_t cols) {
  CUDA_KERNEL_LOOP(c, cols) {
    float sum = 0.f;
    for (int64_t r = 0; r < rows; ++r) sum += x[r * cols + c];
    out[c] = sum;
  }
}

}  // namespace

void LaunchBroadcastRows(const float* b, float* y, int64_t rows, int64_t cols,
                         cudaStream_t stream) {
  BroadcastRowsKernel<<<BlocksFor(rows * cols), kThreadsPerBlock, 0, stream>>>(b, y, rows, cols);
}

void LaunchColumnSums(const float* x, float* out, int64_t rows, int64_t cols, cudaStream_t stream) {
  ColumnSumsKernel<<<BlocksFor(cols), kThreadsPerBlock, 0, stream>>>(x, out, rows, cols);
}

}  // namespace crossbow::cuda
