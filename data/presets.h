#pragma once

#include <string>
#include <vector>

#include "data/transforms.h"

namespace crossbow::data {

// Named input pipelines, each a training and an evaluation transform (docs/design/data.md has
// their parameters): the data layer owns them, nets and the command line name them.
//   cifar     pad 4, random crop, mirror; CIFAR-10 mean/std; records must be size x size
//   imagenet  random-resized crop (area [0.08, 1], ratio [3/4, 4/3]), mirror; ImageNet mean/std;
//             evaluation: shorter side to size / 0.875, centre crop; any record size
//   mnist     MNIST mean/std, one channel; records must be size x size
//   none      pixels / 255, as stored
// `size` is the net's input side. Colour presets give RGB, as torchvision's statistics are.
TransformConfig PresetTransform(const std::string& name, bool train, int size);
const std::vector<std::string>& PresetNames();

// What the training options may change of any transform (--mean, --std, --min-crop-area,
// --eval-crop): an empty mean or std, a min_crop_area of 0 and an eval_crop of "preset" keep the
// transform's. A min_crop_area for a transform without a random-resized crop is a ValueError;
// eval_crop (EvalCropNames: preset, squash, square; TransformConfig::eval_crop) replaces an
// evaluation transform's resize and leaves a training transform alone.
struct TransformOverrides {
  std::vector<float> mean, std;
  float min_crop_area = 0;
  std::string eval_crop = "preset";
};
// Inline: the option table (libcrossbow, which does not link the data library) names them too.
inline std::vector<std::string> EvalCropNames() { return {"preset", "squash", "square"}; }
void ApplyOverrides(const TransformOverrides& overrides, TransformConfig* transform);

}  // namespace crossbow::data
