#include "data/presets.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "crossbow/core/enforce.h"
#include "crossbow/core/names.h"

namespace crossbow::data {
namespace {

using Make = std::function<void(bool train, int size, TransformConfig*)>;

void Colour(TransformConfig* t, std::vector<float> mean, std::vector<float> deviation) {
  t->channels = 3;
  t->rgb = true;
  t->mean = std::move(mean);
  t->std = std::move(deviation);
}

const std::map<std::string, Make>& Presets() {
  static const std::map<std::string, Make> presets = {
      {"cifar",
       [](bool train, int size, TransformConfig* t) {
         Colour(t, {0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f});
         t->crop = t->fixed_size = size;
         t->pad = train ? 4 : 0;
         t->mirror = train;
       }},
      {"imagenet",
       [](bool train, int size, TransformConfig* t) {
         Colour(t, {0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f});
         t->crop = size;
         t->random_resized_crop = train;
         t->min_area = 0.08f;
         t->min_ratio = 3.0f / 4.0f;
         t->max_ratio = 4.0f / 3.0f;
         t->mirror = train;
         // torchvision's evaluation: Resize(size / 0.875) then CenterCrop(size).
         if (!train) t->resize = static_cast<int>(std::lround(size / 0.875));
       }},
      {"mnist",
       [](bool, int size, TransformConfig* t) {
         t->channels = 1;
         t->mean = {0.1307f};
         t->std = {0.3081f};
         t->crop = t->fixed_size = size;
       }},
      {"none", [](bool, int, TransformConfig*) {}},
  };
  return presets;
}

}  // namespace

TransformConfig PresetTransform(const std::string& name, bool train, int size) {
  const auto& presets = Presets();
  auto it = presets.find(name);
  if (it == presets.end()) {
    std::string list;
    for (const std::string& known : PresetNames()) list += (list.empty() ? "" : ", ") + known;
    throw ValueError(detail::Concat("unknown input preset '", name, "'",
                                    DidYouMean(name, PresetNames()), " (presets: ", list, ")"));
  }
  CROSSBOW_ENFORCE_VALUE(size > 0, "preset '", name, "' needs the net's input size, got ", size);
  TransformConfig t;
  t.train = train;
  t.preset = name;
  it->second(train, size, &t);
  return t;
}

void ApplyOverrides(const TransformOverrides& overrides, TransformConfig* t) {
  if (!overrides.mean.empty()) t->mean = overrides.mean;
  if (!overrides.std.empty()) t->std = overrides.std;
  const std::vector<std::string> crops = EvalCropNames();
  CROSSBOW_ENFORCE_VALUE(std::count(crops.begin(), crops.end(), overrides.eval_crop) == 1,
                         "unknown eval_crop '", overrides.eval_crop, "'; expected ",
                         JoinNames(crops), DidYouMean(overrides.eval_crop, crops));
  if (!t->train && overrides.eval_crop != "preset") {
    t->eval_crop = overrides.eval_crop;
    t->resize = 0;
  }
  if (overrides.min_crop_area == 0) return;
  CROSSBOW_ENFORCE_VALUE(
      t->random_resized_crop,
      "min_crop_area sets the random-resized crop, and this transform has none (",
      t->preset.empty() ? std::string("random_resized_crop is off")
                        : "preset '" + t->preset + (t->train ? "', training" : "', evaluation"),
      ")");
  t->min_area = overrides.min_crop_area;
}

const std::vector<std::string>& PresetNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, make] : Presets()) out.push_back(name);
    return out;
  }();
  return names;
}

}  // namespace crossbow::data
