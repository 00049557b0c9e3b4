#include <math_constants.h>

#include <algorithm>

#include "operators/cuda_launch.cuh"
#include "operators/softmax_loss_op_cuda.h"

namespace crossbow::cuda {
namespace {

// The sum of every thread's `value` over one block of kThreadsPerBlock threads, returned to all
// of them, in a fixed order (deterministic). `shared` holds kThreadsPerBlock values and may be
// reused as soon as this returns.
template <typename T>
__device__ T BlockSum(T value, T* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kThreadsPerBlock / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  const T total = shared[0];
  __syncthreads();
  return total;
}

// One block a row. Each thread reads dy[j] before writing dx[j] for its own j only, and the
// dot product's reads end at BlockSum's barrier, so dx may be dy.
__global__ void SoftmaxGradientKernel(const float* y, const float* dy, int64_t n, int64_t c,
                                      float* dx) {
  __shared__ float shared[kThreadsPerBlock];
  for (int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    const int64_t row = r * c;
    float dot = 0.f;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) dot += dy[row + j] * y[row + j];
    dot = BlockSum(dot, shared);
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      dx[row + j] = y[row + j] * (dy[row + j] - dot);
    }
  }
}

// One block for the whole batch. A row's term is -t + smoothing (t - mean_c log_prob[c]), t =
// log_prob[label] or, mixed, lam log_prob[label] + (1 - lam) log_prob[label_b]: the CPU's order
// of terms.
__global__ void SoftmaxLossKernel(const float* log_prob, const int32_t* label, int64_t n, int64_t c,
                                  float smoothing, TargetMix mix, float* loss) {
  __shared__ double shared[kThreadsPerBlock];
  double sum = 0.0;
  for (int64_t r = threadIdx.x; r < n; r += blockDim.x) {
    const int32_t l = label[r];
    const int32_t b = mix.lam == nullptr ? l : mix.label_b[r];
    if (l < 0 || l >= c || b < 0 || b >= c) {
      sum += CUDART_NAN;
      continue;
    }
    const float* row = log_prob + r * c;
    const float target = mix.lam == nullptr ? row[l]
                                            : __fadd_rn(__fmul_rn(mix.lam[r], row[l]),
                                                        __fmul_rn(1.f - mix.lam[r], row[b]));
    sum += -static_cast<double>(target);
    if (smoothing > 0.f) {
      double total = 0.0;
      for (int64_t j = 0; j < c; ++j) total += row[j];
      sum += smoothing * (target - total / static_cast<double>(c));
    }
  }
  sum = BlockSum(sum, shared);
  if (threadIdx.x == 0) *loss = static_cast<float>(sum / static_cast<double>(n));
}

__global__ void ExpKernel(const float* x, int64_t count, float* y) {
  CUDA_KERNEL_LOOP(i, count) { y[i] = expf(x[i]); }
}

// The CPU's order of rounding: prob * scale - off, then + (off - on) at the label, or, mixed,
// + lam (off - on) at the label and then + (1 - lam) (off - on) at label_b (no fused
// multiply-add).
__global__ void SoftmaxWithLossGradientKernel(const float* prob, const int32_t* label,
                                              const float* dloss, int64_t n, int64_t c,
                                              float smoothing, TargetMix mix, float* dx) {
  const float scale = dloss[0] / static_cast<float>(n);
  const float off = __fdiv_rn(__fmul_rn(smoothing, scale), static_cast<float>(c));
  const float on = __fadd_rn(__fmul_rn(1.f - smoothing, scale), off);
  const float hit = off - on;
  CUDA_KERNEL_LOOP(i, n * c) {
    const int64_t r = i / c, j = i - r * c;
    const int32_t l = label[r];
    const int32_t b = mix.lam == nullptr ? l : mix.label_b[r];
    float d = __fsub_rn(__fmul_rn(prob[i], scale), off);
    if (mix.lam == nullptr) {
      if (j == l) d = __fadd_rn(d, hit);
    } else {
      if (j == l) d = __fadd_rn(d, __fmul_rn(mix.lam[r], hit));
      if (j == b) d = __fadd_rn(d, __fmul_rn(1.f - mix.lam[r], hit));
    }
    dx[i] = l < 0 || l >= c || b < 0 || b >= c ? CUDART_NAN_F : d;
  }
}

int RowBlocks(int64_t n) { return static_cast<int>(std::min<int64_t>(n, 4096)); }

}  // namespace

void SoftmaxGradient(const float* y, const float* dy, int64_t n, int64_t c, float* dx,
                     cudaStream_t stream) {
  SoftmaxGradientKernel<<<RowBlocks(n), kThreadsPerBlock, 0, stream>>>(y, dy, n, c, dx);
}

void SoftmaxLoss(const float* log_prob, const int32_t* label, int64_t n, int64_t c, float smoothing,
                 TargetMix mix, float* loss, cudaStream_t stream) {
  SoftmaxLossKernel<<<1, kThreadsPerBlock, 0, stream>>>(log_prob, label, n, c, smoothing, mix,
                                                        loss);
}

void Exp(const float* x, int64_t count, float* y, cudaStream_t stream) {
  ExpKernel<<<BlocksFor(count), kThreadsPerBlock, 0, stream>>>(x, count, y);
}

void SoftmaxWithLossGradient(const float* prob, const int32_t* label, const float* dloss, int64_t n,
                             int64_t c, float smoothing, TargetMix mix, float* dx,
                             cudaStream_t stream) {
  SoftmaxWithLossGradientKernel<<<BlocksFor(n * c), kThreadsPerBlock, 0, stream>>>(
      prob, label, dloss, n, c, smoothing, mix, dx);
}

}  // namespace crossbow::cuda
