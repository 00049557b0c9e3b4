#include "operators/channels_last_bn.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "crossbow/core/bfloat16.h"
#include "operators/parallel_threshold.h"

namespace crossbow {
namespace {

// The elements are walked a lane at a time: a row of `channels` values, or where the channels
// divide 64 (16, 32) as many whole rows as make 64 values, so that the loops over a lane, which
// vectorise, run long enough. Per-channel values are repeated across a lane (Repeat), and the
// last lane may be short.
struct Lanes {
  Lanes(int64_t rows, int64_t channels)
      : channels(channels),
        total(rows * channels),
        width(channels < 64 && 64 % channels == 0 ? 64 : channels) {}
  int64_t count() const { return (total + width - 1) / width; }
  int64_t length(int64_t lane) const { return std::min(width, total - lane * width); }
  std::vector<float> Repeat(const float* per_channel) const {
    std::vector<float> out(width);
    for (int64_t j = 0; j < width; ++j) out[j] = per_channel[j % channels];
    return out;
  }

  int64_t channels, total, width;
};

// Lanes summed in float32 before their sums join the float64 totals.
constexpr int64_t kBlockLanes = 256;

// s1[j] += first(i, j) and s2[j] += second(i, j) over the elements i of lanes [begin, end), j
// the place in the lane. The sums do not alias what the terms read, so the loop vectorises.
template <class First, class Second>
void AddLanes(const Lanes& lanes, int64_t begin, int64_t end, First first, Second second,
              float* __restrict s1, float* __restrict s2) {
  for (int64_t l = begin; l < end; ++l) {
    const int64_t at = l * lanes.width, length = lanes.length(l);
    for (int64_t j = 0; j < length; ++j) {
      s1[j] += first(at + j, j);
      s2[j] += second(at + j, j);
    }
  }
}

// For every channel c, the totals over its elements of first(i, j) and second(i, j), each
// summed in float32 over a block of lanes and in float64 across blocks, in order.
template <class First, class Second>
void ChannelSums(const Lanes& lanes, First first, Second second, std::vector<double>* first_total,
                 std::vector<double>* second_total) {
  const int64_t width = lanes.width, blocks = (lanes.count() + kBlockLanes - 1) / kBlockLanes;
  std::vector<float> partial(2 * blocks * width, 0.f);
#pragma omp parallel for schedule(static) if (lanes.total >= kMinParallelElements)
  for (int64_t b = 0; b < blocks; ++b) {
    float* s1 = &partial[2 * b * width];
    AddLanes(lanes, b * kBlockLanes, std::min(lanes.count(), (b + 1) * kBlockLanes), first, second,
             s1, s1 + width);
  }
  first_total->assign(lanes.channels, 0.0);
  second_total->assign(lanes.channels, 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t j = 0; j < width; ++j) {
      (*first_total)[j % lanes.channels] += partial[2 * b * width + j];
      (*second_total)[j % lanes.channels] += partial[(2 * b + 1) * width + j];
    }
  }
}

// out[i] = value(i, j) for every element, lanes in parallel.
template <class T, class Value>
void MapLanes(const Lanes& lanes, Value value, T* __restrict out) {
#pragma omp parallel for schedule(static) if (lanes.total >= kMinParallelElements)
  for (int64_t l = 0; l < lanes.count(); ++l) {
    const int64_t at = l * lanes.width, length = lanes.length(l);
    for (int64_t j = 0; j < length; ++j) out[at + j] = value(at + j, j);
  }
}

// y = max(x a[j] + b[j], 0) and mask = (y > 0) in one pass; restrict, as a byte store could
// otherwise alias every other array and keep the loop from vectorising.
template <class T>
void NormalizeRelu(const Lanes& lanes, const T* __restrict x, const float* __restrict a,
                   const float* __restrict b, T* __restrict y, uint8_t* __restrict mask) {
#pragma omp parallel for schedule(static) if (lanes.total >= kMinParallelElements)
  for (int64_t l = 0; l < lanes.count(); ++l) {
    const int64_t at = l * lanes.width, length = lanes.length(l);
    for (int64_t j = 0; j < length; ++j) {
      const float v = ToFloat(x[at + j]) * a[j] + b[j];
      y[at + j] = FromFloat<T>(v > 0.f ? v : 0.f);
      mask[at + j] = v > 0.f;
    }
  }
}

// ChannelsLastBN::Backward with dY passed where passes(i).
template <class T, class Passes>
void BackwardWhere(const ChannelsLastBN& bn, Passes passes, const T* x, const T* dy,
                   const float* scale, const float* mean, const float* var, T* dx, float* dscale,
                   float* dbias) {
  const Lanes lanes(bn.rows, bn.channels);
  const auto g = [&](int64_t i) {
    const float d = ToFloat(dy[i]);
    return passes(i) ? d : 0.f;
  };
  const std::vector<float> mean_lane = lanes.Repeat(mean);
  const float* m = mean_lane.data();
  std::vector<double> sum_g, sum_gx;
  ChannelSums(
      lanes, [&](int64_t i, int64_t) { return g(i); },
      [&](int64_t i, int64_t j) { return g(i) * (ToFloat(x[i]) - m[j]); }, &sum_g, &sum_gx);
  // dx = scale invstd (g - mean(g) - (x - mean) invstd^2 mean(g (x - mean))).
  std::vector<float> k(bn.channels), mean_g(bn.channels), slope(bn.channels);
  for (int64_t c = 0; c < bn.channels; ++c) {
    const double invstd = 1.0 / std::sqrt(static_cast<double>(var[c]) + bn.epsilon);
    dbias[c] = static_cast<float>(sum_g[c]);
    dscale[c] = static_cast<float>(sum_gx[c] * invstd);
    k[c] = static_cast<float>(scale[c] * invstd);
    mean_g[c] = static_cast<float>(sum_g[c] / bn.rows);
    slope[c] = static_cast<float>(sum_gx[c] / bn.rows * invstd * invstd);
  }
  const std::vector<float> k_lane = lanes.Repeat(k.data()),
                           mean_g_lane = lanes.Repeat(mean_g.data()),
                           slope_lane = lanes.Repeat(slope.data());
  const float *kl = k_lane.data(), *gl = mean_g_lane.data(), *sl = slope_lane.data();
  MapLanes(
      lanes,
      [&](int64_t i, int64_t j) {
        return FromFloat<T>(kl[j] * (g(i) - gl[j] - (ToFloat(x[i]) - m[j]) * sl[j]));
      },
      dx);
}

}  // namespace

template <class T>
void ChannelsLastBN::ForwardTraining(const T* x, const float* scale, const float* bias, float* mean,
                                     float* var, T* y, uint8_t* mask) const {
  // Sums of x - x[0, c] rather than x: the variance from them cancels far less when a channel's
  // mean is large against its spread.
  const Lanes lanes(rows, channels);
  std::vector<float> shift(channels);
  for (int64_t c = 0; c < channels; ++c) shift[c] = ToFloat(x[c]);
  const std::vector<float> shift_lane = lanes.Repeat(shift.data());
  const float* k = shift_lane.data();
  std::vector<double> s1, s2;
  ChannelSums(
      lanes, [&](int64_t i, int64_t j) { return ToFloat(x[i]) - k[j]; },
      [&](int64_t i, int64_t j) {
        const float d = ToFloat(x[i]) - k[j];
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
  const Lanes lanes(rows, channels);
  std::vector<float> a(channels), b(channels);
  for (int64_t c = 0; c < channels; ++c) {
    a[c] = scale[c] / std::sqrt(var[c] + epsilon);
    b[c] = bias[c] - mean[c] * a[c];
  }
  const std::vector<float> a_lane = lanes.Repeat(a.data()), b_lane = lanes.Repeat(b.data());
  const float *al = a_lane.data(), *bl = b_lane.data();
  if (!relu) {
    MapLanes(
        lanes, [&](int64_t i, int64_t j) { return FromFloat<T>(ToFloat(x[i]) * al[j] + bl[j]); },
        y);
  } else if (mask == nullptr) {
    MapLanes(
        lanes,
        [&](int64_t i, int64_t j) {
          return FromFloat<T>(std::max(ToFloat(x[i]) * al[j] + bl[j], 0.f));
        },
        y);
  } else {
    NormalizeRelu(lanes, x, al, bl, y, mask);
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
