#pragma once

// Kernels of the CUDA softmax operators (softmax_loss_op.cu), on row-major [n, c] float rows
// with n, c > 0. Launched on `stream`; the caller checks cudaGetLastError(). A label outside
// [0, c) cannot throw on the GPU: it makes its row's loss term and gradient NaN, so the loss
// says so at once.
#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// Mixed targets (SoftmaxWithLoss's label_b and lam), on the device; both null: none. A label_b
// outside [0, c) makes its row NaN as a label does; lam is not checked.
struct TargetMix {
  const int32_t* label_b = nullptr;
  const float* lam = nullptr;
};

// dx = y * (dy - <dy, y>) per row; dx may be dy.
void SoftmaxGradient(const float* y, const float* dy, int64_t n, int64_t c, float* dx,
                     cudaStream_t stream);
// *loss = mean over rows of -sum_c q[r, c] log_prob[r, c], q = (1 - smoothing) onehot(label[r])
// + smoothing / c (mixed: lam[r] of that and 1 - lam[r] of label_b[r]'s), summed in double in a
// fixed order.
void SoftmaxLoss(const float* log_prob, const int32_t* label, int64_t n, int64_t c, float smoothing,
                 TargetMix mix, float* loss, cudaStream_t stream);
// y = exp(x), element-wise over `count` values; y may be x.
void Exp(const float* x, int64_t count, float* y, cudaStream_t stream);
// dx = (prob - q) * dloss[0] / n, q as in SoftmaxLoss; dloss is on the device; dx may be prob.
void SoftmaxWithLossGradient(const float* prob, const int32_t* label, const float* dloss, int64_t n,
                             int64_t c, float smoothing, TargetMix mix, float* dx,
                             cudaStream_t stream);

}  // namespace crossbow::cuda
