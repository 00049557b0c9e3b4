#pragma once

// Dataset converters: image folders and list files (as Caffe's convert_imageset), MNIST IDX
// files, the CIFAR-10/100 binaries, and the per-channel statistics of a DB. Each writes Caffe
// Datum records into a new LMDB, prints progress on stderr and returns what it did. Raw records
// are CHW uint8 in OpenCV's channel order (BGR for colour), as convert_imageset writes them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/db_meta.h"

namespace crossbow::data {

// One source record left out, and why.
struct SkippedRecord {
  std::string where;   // "line 12 (cat/0001.jpg)", "data_batch_1.bin record 57", "key 00000003"
  std::string reason;  // a short category: "unreadable image", "missing label", "wrong size"
  std::string detail;  // the specifics, may be empty
};

struct ConvertSummary {
  std::string db;
  int64_t written = 0;
  std::vector<SkippedRecord> skipped;
  double seconds = 0;
  int32_t min_label = 0, max_label = -1;  // of the records written; max < min: none
  std::string ToString() const;  // counts, the label range, skips by reason, the first skips
};

struct WriteOptions {
  bool overwrite = false;  // replace a DB already at the path
  bool progress = true;    // a progress line (done/total, records/s) on stderr
};

// Caffe's convert_imageset flags, same names and meaning; `seed` fixes the shuffle.
struct ImagesetOptions : WriteOptions {
  int resize_width = 0, resize_height = 0;  // both or neither (distorts the aspect ratio)
  // Aspect ratio kept (at most one of these and resize_width/height): the shorter side scaled to
  // resize_shorter (up or down, as torchvision's Resize(S)), or the longer side shrunk to at
  // most max_side (smaller images kept as they are, as FFCV's max_resolution).
  int resize_shorter = 0, max_side = 0;
  bool shuffle = false;
  uint32_t seed = 0;
  bool gray = false;
  bool encoded = false;     // keep (or make) JPEG/PNG bytes instead of raw pixels
  std::string encode_type;  // "jpg", "png"...; empty with `encoded`: the file's own format
  bool check_size = false;  // skip images whose size differs from the first one written
};

// What each imageset flag does: the help of crossbow_convert's flags and of `crossbow convert
// imageset`'s (through the binding's imageset_flag_docs).
struct FlagDoc {
  const char* name;
  const char* doc;
};
inline constexpr FlagDoc kImagesetFlagDocs[] = {
    {"resize_width", "imageset: width images are resized to (with --resize_height)"},
    {"resize_height", "imageset: height images are resized to (with --resize_width)"},
    {"resize_shorter", "imageset: shorter side scaled to this, aspect ratio kept"},
    {"max_side", "imageset: longer side shrunk to at most this, aspect ratio kept"},
    {"shuffle", "imageset: shuffle the images before writing them"},
    {"seed", "imageset: seed of --shuffle"},
    {"gray", "imageset: read images as grayscale"},
    {"encoded", "imageset: store encoded images (the file's own bytes if possible)"},
    {"encode_type", "imageset: format to encode images in (png, jpg...)"},
    {"check_size", "imageset: skip images whose size differs from the first one"},
};

// The doc of imageset flag `name`, "" where it has none.
constexpr const char* ImagesetFlagDoc(std::string_view name) {
  for (const FlagDoc& flag : kImagesetFlagDocs) {
    if (name == flag.name) return flag.doc;
  }
  return "";
}

// LISTFILE lines are "relative/path label"; keys are "%08d_relative/path" in list order
// (after the shuffle), images read from ROOT/relative/path.
ConvertSummary ConvertImageset(const std::string& root, const std::string& list_file,
                               const std::string& db, const ImagesetOptions& options);

// One class per sub-folder of `root`: sorted class names get labels 0, 1, ...; their names
// are written one a line to DB/labels.txt. Files are taken in sorted order within a class.
ConvertSummary ConvertImageFolders(const std::string& root, const std::string& db,
                                   const ImagesetOptions& options);

// IDX image and label files, gzipped or not; keys "%08d".
ConvertSummary ConvertMnist(const std::string& images, const std::string& labels,
                            const std::string& db, const WriteOptions& options);

// The official binary versions: records of 1 label byte (CIFAR-10) or a coarse and a fine
// label byte (CIFAR-100; `coarse` picks the 20 super-classes) and 3072 bytes of RGB planes,
// stored as BGR; keys "%08d" numbered across the files in the order given.
ConvertSummary ConvertCifar10(const std::string& db, const std::vector<std::string>& files,
                              const WriteOptions& options);
ConvertSummary ConvertCifar100(const std::string& db, const std::vector<std::string>& files,
                               bool coarse, const WriteOptions& options);

// Per-channel mean and standard deviation (population) of the pixels of every record, on
// the 0-255 scale, encoded records decoded. Corrupt records are skipped and listed.
struct ChannelStats {
  std::vector<double> mean, std;
  int64_t records = 0;
  std::vector<SkippedRecord> skipped;
  std::string ToString() const;
};
ChannelStats ComputeChannelStats(const std::string& db, bool progress = true);

// The full scan of `crossbow db check`: every record read and parsed (in parallel, with
// progress), the metadata they give (`found`), and the metadata beside the DB (`recorded`, if
// any) compared with it. `write_meta` writes what the scan found as the DB's metadata.
struct DbCheck {
  std::string db;
  DbMeta found;
  std::optional<DbMeta> recorded;
  std::vector<SkippedRecord> unparsed;
  double seconds = 0;
  bool written = false;
  bool agrees() const;  // recorded and found agree
  std::string ToString() const;
};
DbCheck CheckDb(const std::string& db, bool write_meta, bool progress = true);

}  // namespace crossbow::data
