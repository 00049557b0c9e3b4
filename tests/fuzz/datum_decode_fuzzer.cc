// libFuzzer target: arbitrary bytes through the Datum parser, and every parsed record through
// decoding and the transforms (train and test settings), as the loader's workers run them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "data/datum.h"
#include "data/transforms.h"

using crossbow::data::Datum;
using crossbow::data::TransformConfig;
using crossbow::data::Transformer;

namespace {

void Transform(const Datum& datum, bool train) {
  TransformConfig config;
  config.train = train;
  config.crop = 8;
  config.pad = train ? 2 : 0;
  config.resize = train ? 0 : 10;
  config.mirror = true;
  config.brightness = config.contrast = config.saturation = train ? 0.4f : 0.0f;
  Datum probe;
  probe.channels = 3;
  probe.height = probe.width = 12;
  probe.data.assign(3 * 12 * 12, '\0');
  Transformer transformer(config, probe);
  std::vector<float> out(transformer.output_size());
  std::string error;
  transformer.Apply(datum, 1234, out.data(), &error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Datum datum;
  std::string error;
  if (!crossbow::data::ParseDatum(data, size, &datum, &error)) return 0;
  // The decoders get the bytes as a record's image too, not only as parsed fields.
  Datum raw_image;
  raw_image.encoded = true;
  raw_image.data.assign(reinterpret_cast<const char*>(data), size);
  for (bool train : {true, false}) {
    Transform(datum, train);
    Transform(raw_image, train);
  }
  return 0;
}
