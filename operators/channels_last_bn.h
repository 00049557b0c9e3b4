#pragma once

#include <cstdint>

namespace crossbow {

// Batch normalisation of channels-last (nhwc) activations in Crossbow's own loops: X is `rows`
// (N*H*W) rows of `channels` contiguous values of type T (float, or uint16_t for bfloat16),
// computed in float32. oneDNN 2.6's batch norm runs 4-5x slower on nhwc than on its blocked
// layout, and on AMX the convolutions want nhwc: on ResNet-50 at 128 px in bf16, oneDNN's
// batch norm took 131 ms of the step's 712 ms of oneDNN time (docs/history/results-0.1.0.md).
// Sums run per block of rows in float32 and add up across blocks in float64, in a fixed order:
// the results do not depend on the thread count. With `relu` the ReLU is fused: Y =
// max(BN(X), 0), the forward pass writes mask[i] = (BN(X)[i] > 0) where given a mask, and the
// gradient passes dY only where the mask is set.
struct ChannelsLastBN {
  int64_t rows, channels;
  float epsilon;
  bool relu;

  // Y from the batch statistics, which it writes to mean and var (biased).
  template <class T>
  void ForwardTraining(const T* x, const float* scale, const float* bias, float* mean, float* var,
                       T* y, uint8_t* mask) const;
  // Y from given statistics (the running ones in inference).
  template <class T>
  void Normalize(const T* x, const float* scale, const float* bias, const float* mean,
                 const float* var, T* y, uint8_t* mask) const;
  // dX, dscale and dbias from the statistics ForwardTraining saved.
  template <class T>
  void Backward(const T* x, const T* dy, const uint8_t* mask, const float* scale, const float* mean,
                const float* var, T* dx, float* dscale, float* dbias) const;
};

}  // namespace crossbow
