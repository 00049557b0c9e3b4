#include "data/bilinear_resize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace crossbow::data {
namespace {

// 32 bits less 8 for the pixel and 2 of headroom: a sum of weighted pixels fits an int32.
constexpr int kPrecisionBits = 32 - 8 - 2;

// For each output position, the first input position it reads, how many, and their weights
// (fixed point, `taps` a position).
struct Taps {
  int taps = 0;
  std::vector<int> first, count;
  std::vector<int32_t> weights;
};

double Triangle(double x) {
  x = std::abs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

Taps BilinearTaps(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's support, 1, widened
  Taps t;
  t.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(out_size);
  t.count.resize(out_size);
  t.weights.assign(static_cast<size_t>(out_size) * t.taps, 0);
  std::vector<double> k(t.taps);
  for (int o = 0; o < out_size; ++o) {
    const double centre = (o + 0.5) * scale;
    // Truncation toward zero, then clamping, as Pillow rounds the window's ends.
    const int first = std::max(0, static_cast<int>(centre - support + 0.5));
    const int last = std::min(in_size, static_cast<int>(centre + support + 0.5));
    const int count = last - first;
    double sum = 0;
    const double inverse = 1.0 / filter_scale;  // multiplied, not divided, as Pillow does
    for (int i = 0; i < count; ++i) {
      k[i] = Triangle((i + first - centre + 0.5) * inverse);
      sum += k[i];
    }
    for (int i = 0; i < count; ++i) {
      const double w = (sum != 0 ? k[i] / sum : k[i]) * (1 << kPrecisionBits);
      t.weights[static_cast<size_t>(o) * t.taps + i] =
          static_cast<int32_t>(w < 0 ? w - 0.5 : w + 0.5);
    }
    t.first[o] = first;
    t.count[o] = count;
  }
  return t;
}

uint8_t Clip8(int32_t v) {
  if (v >= (1 << kPrecisionBits << 8)) return 255;
  if (v <= 0) return 0;
  return static_cast<uint8_t>(v >> kPrecisionBits);
}

// One pass along rows (`horizontal`) or columns of `in` into `out`, which has the other side's
// size of `in`.
void Pass(const cv::Mat& in, const Taps& t, bool horizontal, cv::Mat* out) {
  const int channels = in.channels();
  for (int y = 0; y < out->rows; ++y) {
    uint8_t* o = out->ptr<uint8_t>(y);
    for (int x = 0; x < out->cols; ++x) {
      const int at = horizontal ? x : y;
      const int32_t* w = t.weights.data() + static_cast<size_t>(at) * t.taps;
      for (int c = 0; c < channels; ++c) {
        int32_t sum = 1 << (kPrecisionBits - 1);
        for (int i = 0; i < t.count[at]; ++i) {
          const int src = t.first[at] + i;
          const uint8_t p = horizontal ? in.ptr<uint8_t>(y)[src * channels + c]
                                       : in.ptr<uint8_t>(src)[x * channels + c];
          sum += p * w[i];
        }
        o[x * channels + c] = Clip8(sum);
      }
    }
  }
}

}  // namespace

void PillowBilinearResize(const cv::Mat& in, cv::Size size, cv::Mat* out) {
  CV_Assert(in.depth() == CV_8U && size.width > 0 && size.height > 0);
  // Pillow 13 runs the columns first where the height shrinks by more than twice as many
  // pixels as the width; each pass rounds, so the order shows in the last bit.
  const int shrink_height = in.rows - size.height, shrink_width = in.cols - size.width;
  const bool rows_first = !(shrink_height > 0 && shrink_height > 2 * shrink_width);
  cv::Mat image = in;
  for (const bool horizontal : {rows_first, !rows_first}) {
    const int from = horizontal ? image.cols : image.rows;
    const int to = horizontal ? size.width : size.height;
    if (from == to) continue;
    cv::Mat next(horizontal ? image.rows : to, horizontal ? to : image.cols, image.type());
    Pass(image, BilinearTaps(from, to), horizontal, &next);
    image = next;
  }
  *out = image.data == in.data ? in.clone() : image;
}

}  // namespace crossbow::data
