#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace crossbow::data {

// Caffe's Datum record (caffe.proto, message Datum), wire-compatible: field 1 channels,
// 2 height, 3 width (int32), 4 data (bytes: raw CHW uint8 or encoded JPEG/PNG), 5 label
// (int32), 6 float_data (repeated float, packed or not), 7 encoded (bool).
struct Datum {
  int32_t channels = 0, height = 0, width = 0;
  std::string data;
  int32_t label = 0;
  std::vector<float> float_data;
  bool encoded = false;
};

// Parses protobuf wire bytes. Never throws or crashes on arbitrary input: returns false and
// says why in `error` (unknown fields are skipped, as protobuf does).
bool ParseDatum(const void* bytes, size_t size, Datum* out, std::string* error);
std::string SerializeDatum(const Datum& datum);

// A raw (not encoded) record whose sizes disagree with its bytes, or whose sizes are not
// positive, is corrupt: returns false with the reason.
bool CheckRawDatum(const Datum& datum, std::string* error);

}  // namespace crossbow::data
