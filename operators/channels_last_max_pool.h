#pragma once

#include <cstdint>

namespace crossbow {

// Max pooling of channels-last (nhwc) activations in Crossbow's own loops: X is [images,
// height, width, channels] of type T (float, or uint16_t for bfloat16), Y [images, out_height,
// out_width, channels]. oneDNN 2.6's bf16 pooling on nhwc took 9.7 ms forward and 12.0 ms
// backward for ResNet-18's stem at 224 px, batch 16, on AMX (docs/history/results-0.1.0.md), a
// tenth of the speed at which the same bytes stream. The argmax output holds, per element of
// Y, the winner's place in its window (row * kernel + column), so kernel * kernel <= 256 (Fits).
// A NaN in a window wins it, as in PyTorch; among equal values the first in row-major order.
struct ChannelsLastMaxPool {
  int64_t images, channels, height, width;
  int64_t out_height, out_width;
  int64_t kernel, stride, pad;

  static bool Fits(int64_t kernel) { return kernel * kernel <= 256; }

  // Y, and argmax where given (training).
  template <class T>
  void Forward(const T* x, T* y, uint8_t* argmax) const;
  // dX from dY and the forward pass's argmax: each input's sum, in float32, of the dY of the
  // windows it won, taken in Y's row-major order and rounded to T once.
  template <class T>
  void Backward(const T* dy, const uint8_t* argmax, T* dx) const;
};

}  // namespace crossbow
