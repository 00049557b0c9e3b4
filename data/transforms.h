#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crossbow/core/tensor.h"
#include "data/datum.h"

namespace crossbow::data {

// What happens to one record between the DB and a batch. Random steps (random crops, mirror,
// colour jitter) run only when `train`; at test time the crop is taken from the centre.
struct TransformConfig {
  bool train = true;
  int channels = 0;  // 1 grayscale, 3 colour; 0 keeps what the first record holds
  // Colour images come out BGR, as Caffe decodes them and as `crossbow convert imageset` stores
  // raw records, or RGB (torchvision's order) when `rgb`: encoded and raw records alike.
  bool rgb = false;
  int resize = 0;  // the shorter side is resized to this first (0: keep)
  int crop = 0;    // square output side (0: the image's own size, the same for every record)
  int pad = 0;     // zeros on each side before cropping (CIFAR: 4 with crop 32)
  // Train: torchvision's RandomResizedCrop (area and aspect ratio ranges) to crop x crop.
  bool random_resized_crop = false;
  float min_area = 0.08f, max_area = 1.0f;
  float min_ratio = 3.0f / 4.0f, max_ratio = 4.0f / 3.0f;
  // Evaluation (train false) in place of `resize` and the centre crop, as fastai's evaluation
  // transforms, resized as Pillow's BILINEAR (data/bilinear_resize.h):
  //   squash  the whole image squashed to crop + m square, m = ceil(crop * 0.14 / 8) * 8,
  //           then the centre crop (RandomResizedCrop's validation, val_xtra 0.14);
  //   square  the centre square of side min(height, width) resized to crop (Resize's).
  // Empty: `resize` and the centre crop.
  std::string eval_crop;
  bool mirror = false;                                 // horizontal flip with probability 1/2
  float brightness = 0, contrast = 0, saturation = 0;  // colour jitter strengths, as torchvision
  // out = (pixel * scale - mean[c]) / std[c]; a mean image (C*H*W at output size) replaces
  // the per-channel mean when given. Empty mean means 0 and empty std means 1.
  float scale = 1.0f / 255.0f;
  std::vector<float> mean, std, mean_image;
  // Records must be fixed_size x fixed_size (0: any size): for presets that neither resize nor
  // crop to fit, so that an image of another size is refused rather than cut. `preset` names
  // the preset the config came from, for messages.
  int fixed_size = 0;
  std::string preset;
  // JPEGs decode at 1/2, 1/4 or 1/8 of their size where what the transform keeps of them (the
  // shorter side before `resize`, the random-resized window) still has at least the output's
  // pixels, so that the resize after it only ever shrinks, as from the whole image.
  bool reduced_decode = true;
};

// Decodes and augments records into NCHW float. Thread-safe (Apply is const) and
// deterministic: the randomness of one record comes from the seed it is given, nothing else.
class Transformer {
 public:
  // Checks the config (ValueError naming the option) and fixes the output channels and, when
  // crop is 0, the output size from `probe`, a record of the DB.
  Transformer(TransformConfig config, const Datum& probe);

  const Shape& output_shape() const { return shape_; }  // C, H, W
  int64_t output_size() const { return NumElements(shape_); }

  // Writes C*H*W floats to `out`. A corrupt record (undecodable image, sizes that disagree
  // with the bytes, an image of the wrong size) returns false with the reason.
  bool Apply(const Datum& datum, uint64_t seed, float* out, std::string* error) const;

 private:
  // False with the reason when the config takes a fixed size that the image is not.
  bool SizeFits(int64_t height, int64_t width, std::string* error) const;

  TransformConfig config_;
  Shape shape_;
  std::vector<float> multiplier_;  // per channel: scale / std
  std::vector<float> bias_;        // per output element: -mean / std
};

}  // namespace crossbow::data
