#include "operators/channels_last_bn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "crossbow/core/bfloat16.h"
#include "operators/parallel_threshold.h"

namespace crossbow {
namespace {

// Rows summed in float32 before their sums join the float64 totals.
constexpr int64_t kBlockRows = 256;

// s1[c] += first(i, c) and s2[c] += second(i, c) over the elements i of rows [begin, end).
// The sums do not alias what the terms read, so the loop over channels vectorises.
template <class First, class Second>
void AddRows(int64_t begin, int64_t end, int64_t channels, First first, Second second,
             float* __restrict s1, float* __restrict s2) {
  for (int64_t r = begin; r < end; ++r) {
    for (int64_t c = 0; c < channels; ++c) {
      s1[c] += first(r * channels + c, c);
      s2[c] += second(r * channels + c, c);
    }
  }
}

// For every channel c, the totals over all rows of first(i, c) and second(i, c) (i the element
// index), each summed in float32 over a block of rows and in float64 across blocks, in order.
template <class First, class Second>
void ChannelSums(int64_t rows, int64_t channels, First first, Second second,
                 std::vector<double>* first_total, std::vector<double>* second_total) {
  const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  std::vector<float> partial(2 * blocks * channels, 0.f);
#pragma omp parallel for schedule(static) if (rows * channels >= kMinParallelElements)
  for (int64_t b = 0; b < blocks; ++b) {
    float* s1 = &partial[2 * b * channels];
    AddRows(b * kBlockRows, std::min(rows, (b + 1) * kBlockRows), channels, first, second, s1,
            s1 + channels);
  }
  first_total->assign(channels, 0.0);
  second_total->assign(channels, 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t c = 0; c < channels; ++c) {
      (*first_total)[c] += partial[2 * b * channels + c];
      (*second_total)[c] += partial[(2 * b + 1) * channels + c];
    }
  }
}

// out[i] = value(i, c) for the elements of every row, rows in parallel.
template <class T, class Value>
void MapRows(int64_t rows, int64_t channels, Value value, T* __restrict out) {
#pragma omp parallel for schedule(static) if (rows * channels >= kMinParallelElements)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < channels; ++c) out[r * channels + c] = value(r * channels + c, c);
  }
}

// ChannelsLastBN::Backward with dY passed where passes(i).
template <class T, class Passes>
void BackwardWhere(const ChannelsLastBN& bn, Passes passes, const T* x, const T* dy,
                   const float* scale, const float* mean, const float* var, T* dx, float* dscale,
                   float* dbias) {
  const int64_t rows = bn.rows, channels = bn.channels;
  const auto g = [&](int64_t i) {
    const float d = ToFloat(dy[i]);
    return passes(i) ? d : 0.f;
  };
  std::vector<double> sum_g, sum_gx;
  ChannelSums(
      rows, channels, [&](int64_t i, int64_t) { return g(i); },
      [&](int64_t i, int64_t c) { return g(i) * (ToFloat(x[i]) - mean[c]); }, &sum_g, &sum_gx);
  // dx = scale invstd (g - mean(g) - (x - mean) invstd^2 mean(g (x - mean))).
  std::vector<float> k_values(channels), mean_g_values(channels), slope_values(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double invstd = 1.0 / std::sqrt(static_cast<double>(var[c]) + bn.epsilon);
    dbias[c] = static_cast<float>(sum_g[c]);
    dscale[c] = static_cast<float>(sum_gx[c] * invstd);
    k_values[c] = static_cast<float>(scale[c] * invstd);
    mean_g_values[c] = static_cast<float>(sum_g[c] / rows);
    slope_values[c] = static_cast<float>(sum_gx[c] / rows * invstd * invstd);
  }
  const float* k = k_values.data();
  const float* mean_g = mean_g_values.data();
  const float* slope = slope_values.data();
  MapRows(
      rows, channels,
      [&](int64_t i, int64_t c) {
        return FromFloat<T>(k[c] * (g(i) - mean_g[c] - (ToFloat(x[i]) - mean[c]) * slope[c]));
      },
      dx);
}

}  // namespace

template <class T>
void ChannelsLastBN::ForwardTraining(const T* x, const float* scale, const float* bias, float* mean,
                                     float* var, T* y, uint8_t* mask) const {
  // Sums of x - x[0, c] rather than x: the variance from them cancels far less when a channel's
  // mean is large against its spread.
  std::vector<float> shift_values(channels);
  for (int64_t c = 0; c < channels; ++c) shift_values[c] = ToFloat(x[c]);
  const float* shift = shift_values.data();
  std::vector<double> s1, s2;
  ChannelSums(
      rows, channels, [&](int64_t i, int64_t c) { return ToFloat(x[i]) - shift[c]; },
      [&](int64_t i, int64_t c) {
        const float d = ToFloat(x[i]) - shift[c];
        return d * d;
      },
      &s1, &s2);
  for (int64_t c = 0; c < channels; ++c) {
    const double m = s1[c] / rows;
    mean[c] = static_cast<float>(shift[c] + m);
    var[c] = static_cast<float>(std::max(s2[c] / rows - m * m, 0.0));
  }
  Normalize(x, scale, bias, mean, var, y, mask);
}

template <class T>
void ChannelsLastBN::Normalize(const T* x, const float* scale, const float* bias, const float* mean,
                               const float* var, T* y, uint8_t* mask) const {
  std::vector<float> a_values(channels), b_values(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a_values[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b_values[c] = bias[c] - mean[c] * a_values[c];
  }
  const float* a = a_values.data();
  const float* b = b_values.data();
  if (!relu) {
    MapRows(
        rows, channels,
        [&](int64_t i, int64_t c) { return FromFloat<T>(ToFloat(x[i]) * a[c] + b[c]); }, y);
    return;
  }
  MapRows(
      rows, channels,
      [&](int64_t i, int64_t c) {
        return FromFloat<T>(std::max(ToFloat(x[i]) * a[c] + b[c], 0.f));
      },
      y);
  if (mask != nullptr) {
    MapRows(
        rows, channels,
        [&](int64_t i, int64_t) { return static_cast<uint8_t>(ToFloat(y[i]) > 0.f); }, mask);
  }
}

template <class T>
void ChannelsLastBN::Backward(const T* x, const T* dy, const uint8_t* mask, const float* scale,
                              const float* mean, const float* var, T* dx, float* dscale,
                              float* dbias) const {
  // One loop for each case: a mask read only where relu would keep the loops from vectorising.
  if (relu) {
    BackwardWhere(
        *this, [mask](int64_t i) { return mask[i] != 0; }, x, dy, scale, mean, var, dx, dscale,
        dbias);
  } else {
    BackwardWhere(
        *this, [](int64_t) { return true; }, x, dy, scale, mean, var, dx, dscale, dbias);
  }
}

#define CROSSBOW_INSTANTIATE(T)                                                                  \
  template void ChannelsLastBN::ForwardTraining<T>(const T*, const float*, const float*, float*, \
                                                   float*, T*, uint8_t*) const;                  \
  template void ChannelsLastBN::Normalize<T>(const T*, const float*, const float*, const float*, \
                                             const float*, T*, uint8_t*) const;                  \
  template void ChannelsLastBN::Backward<T>(const T*, const T*, const uint8_t*, const float*,    \
                                            const float*, const float*, T*, float*, float*) const;
CROSSBOW_INSTANTIATE(float)
CROSSBOW_INSTANTIATE(uint16_t)
#undef CROSSBOW_INSTANTIATE

}  // namespace crossbow
