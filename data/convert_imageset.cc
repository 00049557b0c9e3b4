// Image files to Datum records, as Caffe's convert_imageset does it (ReadImageToDatum): read
// with OpenCV, optionally resized, stored raw (CHW) or encoded (the file's own bytes when no
// re-encoding is needed).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>  // the IMREAD_* flags
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>

#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"
#include "data/image_codecs.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kChunk = 512;  // images decoded in parallel between sequential writes

struct Entry {
  std::string path;  // relative to the root; also the key's suffix
  int label;
  std::string where;  // "line 12 (path)" or the path
};

struct Decoded {
  Datum datum;
  std::string reason, detail;  // reason is empty when the image was read
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string Extension(const std::string& path) {
  const std::string ext = Lower(fs::path(path).extension().string());
  const std::string bare = ext.empty() ? ext : ext.substr(1);
  return bare == "jpeg" ? "jpg" : bare;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void MatToDatum(const cv::Mat& image, Datum* datum) {
  const int channels = image.channels(), pixels = image.rows * image.cols;
  datum->data.resize(static_cast<size_t>(channels) * pixels);
  const uint8_t* hwc = image.ptr<uint8_t>();  // imread and resize give continuous images
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < pixels; ++i) datum->data[c * pixels + i] = hwc[i * channels + c];
  }
}

// The encodings the loader decodes (data/image_decode.cc: IsSupportedImage).
bool LoaderReads(const std::string& format) {
  static const std::set<std::string> readable = {"jpg", "jpeg", "png", "bmp", "webp", "pbm",
                                                 "pgm", "ppm",  "pnm", "tif", "tiff"};
  return readable.count(format) > 0;
}

// The size `options` resize an image of `size` to; `size` itself where they keep it.
cv::Size TargetSize(cv::Size size, const ImagesetOptions& options) {
  if (options.resize_width > 0) return {options.resize_width, options.resize_height};
  const int shorter = std::min(size.width, size.height), longer = std::max(size.width, size.height);
  double scale = 1;
  if (options.resize_shorter > 0) scale = static_cast<double>(options.resize_shorter) / shorter;
  if (options.max_side > 0 && longer > options.max_side) {
    scale = static_cast<double>(options.max_side) / longer;
  }
  if (scale == 1) return size;
  return {std::max(1, static_cast<int>(std::lround(size.width * scale))),
          std::max(1, static_cast<int>(std::lround(size.height * scale)))};
}

Decoded ReadImage(const std::string& file, const Entry& entry, const ImagesetOptions& options) {
  Decoded out;
  try {
    cv::Mat image = Codecs().read(file, options.gray ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
    if (image.empty()) return {{}, "unreadable image", "OpenCV cannot decode it"};
    const cv::Size target = TargetSize(image.size(), options);
    const bool resize = target != image.size();
    // Area averaging where an image shrinks (no aliasing), bilinear (Caffe's) where it grows.
    const bool area = options.resize_width == 0 && target.area() < image.size().area();
    if (resize) cv::resize(image, image, target, 0, 0, area ? cv::INTER_AREA : cv::INTER_LINEAR);
    Datum& datum = out.datum;
    datum.channels = image.channels();
    datum.height = image.rows;
    datum.width = image.cols;
    datum.label = entry.label;
    std::string format = Lower(options.encode_type);
    if (options.encoded && format.empty()) format = Extension(entry.path);
    if (format.empty()) {
      if (options.encoded) return {{}, "unknown format", "no extension to take the encoding from"};
      MatToDatum(image, &datum);
      return out;
    }
    if (!LoaderReads(format)) {
      return {{},
              "unsupported encoding",
              "'" + format + "': records are read as JPEG, PNG, BMP, PNM, TIFF or WebP (give " +
                  "--encode_type)"};
    }
    datum.encoded = true;
    if (!resize && Extension(entry.path) == (format == "jpeg" ? "jpg" : format)) {
      datum.data = ReadBytes(file);
    } else {
      std::vector<uint8_t> buffer;
      if (!Codecs().encode("." + format, image, &buffer)) return {{}, "cannot encode", format};
      datum.data.assign(buffer.begin(), buffer.end());
    }
  } catch (const cv::Exception& e) {
    return {{}, "OpenCV error", e.what()};
  }
  return out;
}

std::string JoinRoot(const std::string& root, const std::string& path) {
  if (root.empty() || root.back() == '/') return root + path;
  return root + "/" + path;
}

// Also loads the codecs here, where a failure is an error, not inside the parallel reads.
void CheckOptions(const ImagesetOptions& options) {
  const ImageCodecs& codecs = Codecs();
  CROSSBOW_ENFORCE_VALUE((options.resize_width > 0) == (options.resize_height > 0),
                         "resize_width and resize_height must be given together, got ",
                         options.resize_width, " and ", options.resize_height);
  CROSSBOW_ENFORCE_VALUE(options.resize_shorter >= 0 && options.max_side >= 0,
                         "resize_shorter and max_side must not be negative, got ",
                         options.resize_shorter, " and ", options.max_side);
  CROSSBOW_ENFORCE_VALUE(
      (options.resize_width > 0) + (options.resize_shorter > 0) + (options.max_side > 0) <= 1,
      "give one of resize_width/resize_height, resize_shorter and max_side");
  CROSSBOW_ENFORCE_VALUE(
      options.encode_type.empty() || (LoaderReads(Lower(options.encode_type)) &&
                                      codecs.can_write("." + Lower(options.encode_type))),
      "encode_type '", options.encode_type, "' is not an image format that OpenCV can write ",
      "and the loader reads (jpg, png, bmp, webp, pnm, tif)");
}

ConvertSummary ConvertEntries(const std::string& root, std::vector<Entry> entries,
                              const std::vector<SkippedRecord>& list_skips, const std::string& db,
                              const ImagesetOptions& options,
                              std::vector<std::string> class_names = {}) {
  if (options.shuffle) std::shuffle(entries.begin(), entries.end(), std::mt19937(options.seed));
  const auto total = static_cast<int64_t>(entries.size() + list_skips.size());
  ConvertSink sink(db, total, options);
  sink.SetClassNames(std::move(class_names));
  for (const auto& skip : list_skips) sink.Skip(skip.where, skip.reason, skip.detail);
  const auto count = static_cast<int64_t>(entries.size());
  std::vector<Decoded> chunk(kChunk);
  Datum first;  // the size that --check_size holds the others to
  bool have_first = false;
  for (int64_t begin = 0; begin < count; begin += kChunk) {
    const int64_t end = std::min(count, begin + kChunk);
#pragma omp parallel for schedule(dynamic, 8)
    for (int64_t i = begin; i < end; ++i) {
      chunk[i - begin] = ReadImage(JoinRoot(root, entries[i].path), entries[i], options);
    }
    for (int64_t i = begin; i < end; ++i) {
      const Decoded& image = chunk[i - begin];
      const Datum& datum = image.datum;
      if (!image.reason.empty()) {
        sink.Skip(entries[i].where, image.reason, image.detail);
        continue;
      }
      if (options.check_size && have_first &&
          (datum.channels != first.channels || datum.height != first.height ||
           datum.width != first.width)) {
        sink.Skip(entries[i].where, "wrong size",
                  std::to_string(datum.channels) + "x" + std::to_string(datum.height) + "x" +
                      std::to_string(datum.width) + ", expected " + std::to_string(first.channels) +
                      "x" + std::to_string(first.height) + "x" + std::to_string(first.width));
        continue;
      }
      if (!have_first) {
        first = datum;
        have_first = true;
      }
      sink.Write(IndexKey(i, entries[i].path), datum);
    }
  }
  return sink.Finish();
}

}  // namespace

ConvertSummary ConvertImageset(const std::string& root, const std::string& list_file,
                               const std::string& db, const ImagesetOptions& options) {
  CheckOptions(options);
  std::ifstream in(list_file);
  CROSSBOW_ENFORCE(in.good(), "cannot read the list file ", list_file);
  std::vector<Entry> entries;
  std::vector<SkippedRecord> skips;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (line.empty()) continue;
    const size_t split = line.find_last_of(" \t");
    const std::string where = "line " + std::to_string(number);
    if (split == std::string::npos) {
      skips.push_back({where + " (" + line + ")", "missing label", "no space before a label"});
      continue;
    }
    const std::string path = line.substr(0, line.find_last_not_of(" \t", split) + 1);
    const std::string label = line.substr(split + 1);
    char* parsed_end;
    const long value = std::strtol(label.c_str(), &parsed_end, 10);
    if (*parsed_end != '\0' || value < 0 || value > INT32_MAX) {
      skips.push_back({where + " (" + path + ")", "bad label", "'" + label + "'"});
      continue;
    }
    entries.push_back({path, static_cast<int>(value), where + " (" + path + ")"});
  }
  return ConvertEntries(root, std::move(entries), skips, db, options);
}

ConvertSummary ConvertImageFolders(const std::string& root, const std::string& db,
                                   const ImagesetOptions& options) {
  CheckOptions(options);
  CROSSBOW_ENFORCE(fs::is_directory(root), "image folder root ", root, " is not a folder");
  auto sorted_children = [](const fs::path& folder, bool folders) {
    std::vector<std::string> names;
    for (const auto& child : fs::directory_iterator(folder)) {
      const std::string name = child.path().filename().string();
      if (name[0] != '.' && (folders ? child.is_directory() : child.is_regular_file())) {
        names.push_back(name);
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> classes = sorted_children(root, true);
  CROSSBOW_ENFORCE(!classes.empty(), "image folder root ", root, " has no class sub-folders");
  std::vector<Entry> entries;
  for (size_t label = 0; label < classes.size(); ++label) {
    for (const auto& file : sorted_children(fs::path(root) / classes[label], false)) {
      const std::string path = classes[label] + "/" + file;
      entries.push_back({path, static_cast<int>(label), path});
    }
  }
  return ConvertEntries(root, std::move(entries), {}, db, options, classes);
}

}  // namespace crossbow::data
