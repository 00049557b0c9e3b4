// The CIFAR-10/100 binary versions (Krizhevsky 2009): fixed-size records of label bytes and
// 32x32 RGB planes.
#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"

namespace crossbow::data {
namespace {

constexpr int kSide = 32, kPlane = kSide * kSide, kPixels = 3 * kPlane;

// `label_bytes` label bytes lead each record; the one at `label_offset` is used and must be
// below `classes`.
ConvertSummary ConvertCifar(const std::string& db, const std::vector<std::string>& files,
                            int label_bytes, int label_offset, int classes,
                            const WriteOptions& options) {
  CROSSBOW_ENFORCE_VALUE(!files.empty(), "no CIFAR binary files given for ", db);
  const size_t record = label_bytes + kPixels;
  std::vector<std::string> contents;
  int64_t total = 0;
  for (const auto& file : files) {
    contents.push_back(ReadFileMaybeGzipped(file));
    CROSSBOW_ENFORCE_VALUE(contents.back().size() % record == 0, file, ": ", contents.back().size(),
                           " bytes is not a whole number of ", record,
                           "-byte records (is it the CIFAR-", classes == 10 ? "10" : "100",
                           " binary version?)");
    total += static_cast<int64_t>(contents.back().size() / record);
  }
  ConvertSink sink(db, total, options);
  Datum datum;
  datum.channels = 3;
  datum.height = datum.width = kSide;
  datum.data.resize(kPixels);
  int64_t index = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const std::string& bytes = contents[f];
    for (size_t at = 0, i = 0; at < bytes.size(); at += record, ++i) {
      const int label = static_cast<uint8_t>(bytes[at + label_offset]);
      if (label >= classes) {
        sink.Skip(files[f] + " record " + std::to_string(i), "label out of range",
                  std::to_string(label) + " not in [0, " + std::to_string(classes) + ")");
        continue;
      }
      datum.label = label;
      const char* rgb = bytes.data() + at + label_bytes;
      for (int c = 0; c < 3; ++c) {  // RGB planes to BGR, the order of OpenCV-decoded images
        std::copy(rgb + (2 - c) * kPlane, rgb + (3 - c) * kPlane, datum.data.begin() + c * kPlane);
      }
      sink.Write(IndexKey(index++), datum);
    }
  }
  return sink.Finish();
}

}  // namespace

ConvertSummary ConvertCifar10(const std::string& db, const std::vector<std::string>& files,
                              const WriteOptions& options) {
  return ConvertCifar(db, files, 1, 0, 10, options);
}

ConvertSummary ConvertCifar100(const std::string& db, const std::vector<std::string>& files,
                               bool coarse, const WriteOptions& options) {
  return ConvertCifar(db, files, 2, coarse ? 0 : 1, coarse ? 20 : 100, options);
}

}  // namespace crossbow::data
