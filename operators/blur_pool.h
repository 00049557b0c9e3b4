#pragma once

// BlurPool's arithmetic, shared by the CPU and CUDA kernels (no dependencies, so that nvcc reads
// it): one output, or one input's gradient, at a time in a fixed order, so that both devices
// compute the same sums. The filter is the binomial [1, 2, 1] / 4 along each axis (Zhang 2019,
// filter size 3), read through a reflection of one pixel, as antialiased-cnns' BlurPool
// (ReflectionPad2d, then a depthwise convolution of the given stride).
#include <cstdint>

#include "operators/host_device.h"

namespace crossbow::blur {

CROSSBOW_HOST_DEVICE inline float Tap(int a) { return a == 1 ? 0.5f : 0.25f; }

// Padded index p in [-1, n] as an index of the row or column: -1 reflects to 1, n to n - 2.
CROSSBOW_HOST_DEVICE inline int64_t Reflect(int64_t p, int64_t n) {
  return p < 0 ? -p : (p >= n ? 2 * n - 2 - p : p);
}

// Output side for an input side n (>= 2): (n + 2 - 3) / stride + 1.
CROSSBOW_HOST_DEVICE inline int64_t OutSide(int64_t n, int64_t stride) {
  return (n - 1) / stride + 1;
}

// Y[i][j] of one H x W plane x, for outputs of stride s.
CROSSBOW_HOST_DEVICE inline float Output(const float* x, int64_t h, int64_t w, int64_t s, int64_t i,
                                         int64_t j) {
  float sum = 0.f;
  for (int a = 0; a < 3; ++a) {
    const float* row = x + Reflect(s * i + a - 1, h) * w;
    float line = 0.f;
    for (int b = 0; b < 3; ++b) line += Tap(b) * row[Reflect(s * j + b - 1, w)];
    sum += Tap(a) * line;
  }
  return sum;
}

// The outputs along one axis that read input index y, with their taps: up to three padded
// positions reflect to y (y itself, -1 where y = 1, n where y = n - 2), each read by the
// outputs whose window covers it. Returns the count written into `out` and `weight` (<= 9).
CROSSBOW_HOST_DEVICE inline int Readers(int64_t y, int64_t n, int64_t s, int64_t* out,
                                        float* weight) {
  const int64_t outs = OutSide(n, s);
  const int64_t padded[3] = {y, y == 1 ? -1 : -2, y == n - 2 ? n : -2};
  int count = 0;
  for (int64_t p : padded) {
    if (p == -2) continue;
    for (int a = 0; a < 3; ++a) {
      const int64_t t = p + 1 - a;  // = s * i
      if (t < 0 || t % s != 0 || t / s >= outs) continue;
      out[count] = t / s;
      weight[count++] = Tap(a);
    }
  }
  return count;
}

// dX[y][x] of one plane from dY (outputs oh x ow), gathered rather than scattered, so that no
// two threads write one element.
CROSSBOW_HOST_DEVICE inline float InputGradient(const float* dy, int64_t h, int64_t w, int64_t s,
                                                int64_t y, int64_t x) {
  int64_t rows[9], cols[9];
  float row_w[9], col_w[9];
  const int nr = Readers(y, h, s, rows, row_w), nc = Readers(x, w, s, cols, col_w);
  const int64_t ow = OutSide(w, s);
  float sum = 0.f;
  for (int r = 0; r < nr; ++r) {
    float line = 0.f;
    for (int c = 0; c < nc; ++c) line += col_w[c] * dy[rows[r] * ow + cols[c]];
    sum += row_w[r] * line;
  }
  return sum;
}

}  // namespace crossbow::blur
