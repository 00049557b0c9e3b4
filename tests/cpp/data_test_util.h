#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "data/datum.h"
#include "data/lmdb_io.h"
#include "data/loader.h"

namespace crossbow::data::testing {

// A raw CHW uint8 record whose pixel (c, y, x) is value(c, y, x).
inline Datum RawDatum(int channels, int height, int width,
                      const std::function<int(int, int, int)>& value, int label = 0) {
  Datum datum;
  datum.channels = channels;
  datum.height = height;
  datum.width = width;
  datum.label = label;
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) datum.data.push_back(static_cast<char>(value(c, y, x)));
    }
  }
  return datum;
}

inline Datum EncodedDatum(const std::vector<unsigned char>& bytes, int label = 0) {
  Datum datum;
  datum.data.assign(bytes.begin(), bytes.end());
  datum.encoded = true;
  datum.label = label;
  return datum;
}

// A 3x2 RGB PNG whose pixel (y, x) is (10y + x, 100 + 10y + x, 200 + y + x).
inline const std::vector<unsigned char>& TinyPng() {
  static const std::vector<unsigned char> bytes = {
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
      0x52, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0x12,
      0x16, 0xf1, 0x4d, 0x00, 0x00, 0x00, 0x1c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60,
      0x48, 0x39, 0xc1, 0x98, 0x7a, 0x92, 0x29, 0xed, 0x14, 0x03, 0x57, 0xde, 0x49, 0xee, 0xfc,
      0x53, 0x3c, 0x05, 0xa7, 0x01, 0x43, 0x9a, 0x07, 0x5a, 0x43, 0x0e, 0xe6, 0x29, 0x00, 0x00,
      0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};
  return bytes;
}

// A fresh folder under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "crossbow_data_XXXXXX");
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Writes `values` (already serialised) under keys 00000000, 00000001, ...
inline void WriteDb(const std::string& path, const std::vector<std::string>& values) {
  LmdbWriter writer(path);
  char key[16];
  for (size_t i = 0; i < values.size(); ++i) {
    std::snprintf(key, sizeof(key), "%08zu", i);
    writer.Put(key, values[i]);
  }
}

// A loader of `path` in batches of 4, labels checked against `num_classes` (0: not checked).
inline LoaderOptions SmallBatches(const std::string& path, int num_classes, int workers) {
  LoaderOptions options;
  options.path = path;
  options.batch_size = 4;
  options.workers = workers;
  options.num_classes = num_classes;
  return options;
}

}  // namespace crossbow::data::testing
