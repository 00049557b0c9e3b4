#include "data/transforms.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "data/bilinear_resize.h"
#include "data/image_decode.h"
#include "data/jpeg_region.h"
#include "data/rng.h"

namespace crossbow::data {
namespace {

bool Fail(std::string* error, const std::string& why) {
  *error = why;
  return false;
}

// Where the output is read from: 8-bit pixels addressed by channel, row and column steps, so
// that raw CHW records and decoded HWC images share the final copy.
struct Pixels {
  const uint8_t* data;
  int64_t height, width;
  int64_t channel_step, row_step, pixel_step;
};

// Raw records hold BGR planes (Caffe's order): `rgb` reads colour ones backwards.
Pixels Planar(const Datum& datum, bool rgb) {
  const int64_t h = datum.height, w = datum.width;
  const auto* bytes = reinterpret_cast<const uint8_t*>(datum.data.data());
  if (rgb && datum.channels == 3) return {bytes + 2 * h * w, h, w, -h * w, w, 1};
  return {bytes, h, w, h * w, w, 1};
}

Pixels Interleaved(const cv::Mat& image) {
  return {image.ptr<uint8_t>(), image.rows, image.cols, 1, static_cast<int64_t>(image.step[0]),
          image.channels()};
}

// A crop window: its top-left corner (negative inside the zero padding) and whether it is
// read right to left.
struct Window {
  int64_t y = 0, x = 0;
  bool mirror = false;
};

// torchvision's RandomResizedCrop.get_params: ten tries at a random area and log-uniform
// aspect ratio, then a centre crop with the ratio clamped to the range.
cv::Rect RandomResizedWindow(int height, int width, const TransformConfig& c, Rng* rng) {
  const double area = static_cast<double>(height) * width;
  const double log_lo = std::log(c.min_ratio), log_hi = std::log(c.max_ratio);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * rng->Uniform(c.min_area, c.max_area);
    const double ratio = std::exp(rng->Uniform(log_lo, log_hi));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int y = static_cast<int>(rng->UniformInt(height - h + 1));
      const int x = static_cast<int>(rng->UniformInt(width - w + 1));
      return {x, y, w, h};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < c.min_ratio) {
    h = static_cast<int>(std::lround(w / c.min_ratio));
  } else if (in_ratio > c.max_ratio) {
    w = static_cast<int>(std::lround(h * c.max_ratio));
  }
  return {(width - w) / 2, (height - h) / 2, w, h};
}

void Resize(const cv::Mat& in, cv::Size size, cv::Mat* out) {
  const bool shrink = size.width < in.cols && size.height < in.rows;
  cv::resize(in, *out, size, 0, 0, shrink ? cv::INTER_AREA : cv::INTER_LINEAR);
}

// The size of an image of height x width after its shorter side is resized to `side`.
cv::Size ShorterSideSize(int height, int width, int side) {
  const double scale = static_cast<double>(side) / std::min(height, width);
  return {std::max(1, static_cast<int>(std::lround(width * scale))),
          std::max(1, static_cast<int>(std::lround(height * scale)))};
}

void ResizeShorterSide(cv::Mat* image, int side) {
  const cv::Size size = ShorterSideSize(image->rows, image->cols, side);
  if (size.height != image->rows || size.width != image->cols) Resize(*image, size, image);
}

// `window` of an image in that image decoded at 1/reduction (rows x cols), each edge rounded to
// the nearest reduced pixel.
cv::Rect ReducedWindow(const cv::Rect& window, int reduction, int rows, int cols) {
  auto at = [reduction](int v) { return (2 * v + reduction) / (2 * reduction); };
  const int x0 = std::min(at(window.x), cols - 1), y0 = std::min(at(window.y), rows - 1);
  const int x1 = std::min(cols, at(window.x + window.width));
  const int y1 = std::min(rows, at(window.y + window.height));
  return {x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0)};
}

// Decodes, crops and resizes an encoded JPEG as the whole-image path would, decoding only the
// window's part of it, at the largest reduction that keeps at least the output's pixels (where
// `reduced_decode`). kNotTaken (nothing consumed from `rng`) where the record is not such a JPEG
// or the partial decoder declines it (data/jpeg_region.h): the caller takes the whole-image path.
enum class Partial { kNotTaken, kDone };

Partial DecodePartial(const Datum& datum, const TransformConfig& c, Rng* rng, cv::Mat* image) {
  const bool rrc = c.train && c.random_resized_crop;
  int height = 0, width = 0;
  if (!datum.encoded || !(rrc || c.resize > 0) || !JpegSize(datum.data, &height, &width)) {
    return Partial::kNotTaken;
  }
  Rng trial = *rng;
  const cv::Rect window =
      rrc ? RandomResizedWindow(height, width, c, &trial) : cv::Rect(0, 0, width, height);
  const int reduction = !c.reduced_decode ? 1
                        : rrc ? JpegReduction(std::min(window.width, window.height), c.crop)
                              : JpegReduction(std::min(height, width), c.resize);
  JpegRegion region;
  region.reduction = reduction;
  region.rows = (height + reduction - 1) / reduction;
  region.cols = (width + reduction - 1) / reduction;
  region.window = ReducedWindow(window, reduction, region.rows, region.cols);
  region.channels = c.channels;
  region.rgb = c.rgb;
  if (!DecodeJpegRegion(datum.data, region, image)) return Partial::kNotTaken;
  *rng = trial;
  Resize(*image, rrc ? cv::Size(c.crop, c.crop) : ShorterSideSize(height, width, c.resize), image);
  return Partial::kDone;
}

// RandomResizedCrop's validation margin: fastai's ceil(crop * val_xtra / 8) * 8, val_xtra 0.14.
int SquashMargin(int crop) { return static_cast<int>(std::ceil(crop * 0.14 / 8)) * 8; }

// fastai's evaluation transforms (TransformConfig::eval_crop), before the centre crop.
void EvalCrop(const TransformConfig& c, cv::Mat* image) {
  if (c.eval_crop == "squash") {
    const int side = c.crop + SquashMargin(c.crop);
    PillowBilinearResize(*image, {side, side}, image);
    return;
  }
  // fastai's Resize: the side as int(min / crop * crop), the corner as int(0.5 * (w - side)).
  const double m = static_cast<double>(std::min(image->rows, image->cols)) / c.crop;
  const int side = static_cast<int>(m * c.crop);
  const cv::Rect centre((image->cols - side) / 2, (image->rows - side) / 2, side, side);
  PillowBilinearResize((*image)(centre), {c.crop, c.crop}, image);
}

// torchvision's ColorJitter in a fixed order: brightness, contrast, saturation.
void ColorJitter(const TransformConfig& c, Rng* rng, cv::Mat* image) {
  auto factor = [rng](float strength) {
    return strength > 0 ? rng->Uniform(std::max(0.0f, 1 - strength), 1 + strength) : 1.0;
  };
  const double brightness = factor(c.brightness), contrast = factor(c.contrast),
               saturation = factor(c.saturation);
  const bool colour = image->channels() == 3;
  const int to_gray = c.rgb ? cv::COLOR_RGB2GRAY : cv::COLOR_BGR2GRAY;
  if (brightness != 1) image->convertTo(*image, -1, brightness);
  if (contrast != 1) {
    cv::Mat gray = *image;
    if (colour) cv::cvtColor(*image, gray, to_gray);
    image->convertTo(*image, -1, contrast, (1 - contrast) * cv::mean(gray)[0]);
  }
  if (saturation != 1 && colour) {
    cv::Mat gray;
    cv::cvtColor(*image, gray, to_gray);
    cv::cvtColor(gray, gray, cv::COLOR_GRAY2BGR);
    cv::addWeighted(*image, saturation, gray, 1 - saturation, 0, *image);
  }
}

}  // namespace

Transformer::Transformer(TransformConfig config, const Datum& probe) : config_(std::move(config)) {
  const TransformConfig& c = config_;
  CROSSBOW_ENFORCE_VALUE(c.channels == 0 || c.channels == 1 || c.channels == 3,
                         "channels must be 0 (as stored), 1 or 3, got ", c.channels);
  CROSSBOW_ENFORCE_VALUE(c.crop >= 0 && c.pad >= 0 && c.resize >= 0,
                         "crop, pad and resize must not be negative, got crop ", c.crop, ", pad ",
                         c.pad, ", resize ", c.resize);
  CROSSBOW_ENFORCE_VALUE(!c.random_resized_crop || c.crop > 0,
                         "random_resized_crop needs a crop size");
  CROSSBOW_ENFORCE_VALUE(0 < c.min_area && c.min_area <= c.max_area && c.max_area <= 1 &&
                             0 < c.min_ratio && c.min_ratio <= c.max_ratio,
                         "random_resized_crop ranges must satisfy 0 < min_area <= max_area <= 1 "
                         "and 0 < min_ratio <= max_ratio");
  CROSSBOW_ENFORCE_VALUE(c.brightness >= 0 && c.contrast >= 0 && c.saturation >= 0,
                         "colour jitter strengths must not be negative");
  CROSSBOW_ENFORCE_VALUE(c.eval_crop.empty() || c.eval_crop == "squash" || c.eval_crop == "square",
                         "eval_crop must be squash or square (or empty), got '", c.eval_crop, "'");
  CROSSBOW_ENFORCE_VALUE(c.eval_crop.empty() || (c.crop > 0 && c.resize == 0), "eval_crop ",
                         c.eval_crop, " needs a crop size and no resize (crop ", c.crop,
                         ", resize ", c.resize, ")");
  cv::Mat image;
  std::string error;
  CROSSBOW_ENFORCE(DecodeDatum(probe, c.channels, c.rgb, &image, &error),
                   "the first record of the DB is unreadable: ", error);
  CROSSBOW_ENFORCE_VALUE(SizeFits(image.rows, image.cols, &error),
                         "the first record of the DB: ", error);
  if (c.resize > 0) ResizeShorterSide(&image, c.resize);
  const int64_t channels = image.channels();
  shape_ = c.crop > 0 ? Shape{channels, c.crop, c.crop} : Shape{channels, image.rows, image.cols};
  config_.channels = static_cast<int>(channels);

  const int64_t plane = shape_[1] * shape_[2];
  auto per_channel = [&](const std::vector<float>& v, const char* name) {
    CROSSBOW_ENFORCE_VALUE(v.empty() || static_cast<int64_t>(v.size()) == channels, name,
                           " must have one value per channel (", channels, "), got ", v.size());
  };
  per_channel(c.mean, "mean");
  per_channel(c.std, "std");
  CROSSBOW_ENFORCE_VALUE(c.mean_image.empty() || c.mean.empty(),
                         "give either a per-channel mean or a mean image, not both");
  CROSSBOW_ENFORCE_VALUE(
      c.mean_image.empty() || static_cast<int64_t>(c.mean_image.size()) == channels * plane,
      "the mean image must have C*H*W = ", channels * plane, " values (output shape ",
      ShapeString(shape_), "), got ", c.mean_image.size());
  multiplier_.resize(channels);
  bias_.resize(channels * plane);
  for (int64_t ch = 0; ch < channels; ++ch) {
    const float deviation = c.std.empty() ? 1.0f : c.std[ch];
    CROSSBOW_ENFORCE_VALUE(deviation > 0, "std must be positive, got ", deviation, " for channel ",
                           ch);
    multiplier_[ch] = c.scale / deviation;
    for (int64_t i = ch * plane; i < (ch + 1) * plane; ++i) {
      const float mean = !c.mean_image.empty() ? c.mean_image[i] : c.mean.empty() ? 0 : c.mean[ch];
      bias_[i] = -mean / deviation;
    }
  }
}

bool Transformer::SizeFits(int64_t height, int64_t width, std::string* error) const {
  const int size = config_.fixed_size;
  if (size == 0 || (height == size && width == size)) return true;
  return Fail(error, "image is " + std::to_string(height) + "x" + std::to_string(width) +
                         "; preset '" + config_.preset + "' takes " + std::to_string(size) + "x" +
                         std::to_string(size) +
                         " images (for other sizes: --augment imagenet, which resizes and crops)");
}

bool Transformer::Apply(const Datum& datum, uint64_t seed, float* out, std::string* error) const {
  const TransformConfig& c = config_;
  const int64_t channels = shape_[0], height = shape_[1], width = shape_[2];
  Rng rng(seed);
  const bool jitter = c.train && (c.brightness > 0 || c.contrast > 0 || c.saturation > 0);
  // Raw records of the right channel count skip OpenCV: the copy below reads them in place.
  const bool eval_crop = !c.train && !c.eval_crop.empty();
  const bool in_place = !datum.encoded && datum.channels == channels && c.resize == 0 &&
                        !(c.train && c.random_resized_crop) && !jitter && !eval_crop;
  cv::Mat image;
  Pixels pixels;
  if (in_place) {
    if (!CheckRawDatum(datum, error)) return false;
    pixels = Planar(datum, c.rgb);
  } else if (DecodePartial(datum, c, &rng, &image) == Partial::kDone) {
    pixels = Interleaved(image);
  } else {
    if (!DecodeDatum(datum, c.channels, c.rgb, &image, error)) return false;
    if (c.train && c.random_resized_crop) {
      const cv::Rect window = RandomResizedWindow(image.rows, image.cols, c, &rng);
      Resize(image(window), {c.crop, c.crop}, &image);
    } else if (eval_crop) {
      EvalCrop(c, &image);
    } else if (c.resize > 0) {
      ResizeShorterSide(&image, c.resize);
    }
    pixels = Interleaved(image);
  }
  if (!SizeFits(pixels.height, pixels.width, error)) return false;

  Window window;
  const int64_t padded_h = pixels.height + 2 * c.pad, padded_w = pixels.width + 2 * c.pad;
  if (c.crop == 0 && (pixels.height != height || pixels.width != width)) {
    return Fail(error, "image is " + std::to_string(pixels.height) + "x" +
                           std::to_string(pixels.width) + ", the DB's first record gave " +
                           std::to_string(height) + "x" + std::to_string(width) +
                           " (set crop to take a fixed size)");
  }
  if (padded_h < height || padded_w < width) {
    return Fail(error, "image is " + std::to_string(pixels.height) + "x" +
                           std::to_string(pixels.width) + " with padding " + std::to_string(c.pad) +
                           ", smaller than the crop " + std::to_string(height) + "x" +
                           std::to_string(width));
  }
  if (c.train) {
    window.y = rng.UniformInt(padded_h - height + 1) - c.pad;
    window.x = rng.UniformInt(padded_w - width + 1) - c.pad;
    window.mirror = c.mirror && rng.Bernoulli();
  } else {
    window.y = (padded_h - height) / 2 - c.pad;
    window.x = (padded_w - width) / 2 - c.pad;
  }
  cv::Mat cropped;
  if (jitter) {  // jitter works on the cropped image, so it is cut out first
    cv::copyMakeBorder(image, cropped, c.pad, c.pad, c.pad, c.pad, cv::BORDER_CONSTANT, 0);
    cropped = cropped(cv::Rect(window.x + c.pad, window.y + c.pad, width, height)).clone();
    if (window.mirror) cv::flip(cropped, cropped, 1);
    ColorJitter(c, &rng, &cropped);
    pixels = Interleaved(cropped);
    window = Window();
  }

  for (int64_t ch = 0; ch < channels; ++ch) {
    const float a = multiplier_[ch];
    for (int64_t y = 0; y < height; ++y) {
      float* o = out + (ch * height + y) * width;
      const float* b = bias_.data() + (ch * height + y) * width;
      const int64_t sy = window.y + y;
      if (sy < 0 || sy >= pixels.height) {
        std::copy(b, b + width, o);
        continue;
      }
      const uint8_t* row = pixels.data + ch * pixels.channel_step + sy * pixels.row_step;
      for (int64_t x = 0; x < width; ++x) {
        const int64_t sx = window.mirror ? window.x + width - 1 - x : window.x + x;
        const float value = sx >= 0 && sx < pixels.width ? row[sx * pixels.pixel_step] : 0;
        o[x] = value * a + b[x];
      }
    }
  }
  return true;
}

}  // namespace crossbow::data
