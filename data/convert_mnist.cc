// MNIST's IDX files (LeCun et al.): a big-endian header, then uint8 values.
#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"

namespace crossbow::data {
namespace {

constexpr uint32_t kImagesMagic = 0x00000803, kLabelsMagic = 0x00000801;

uint32_t BigEndian(const std::string& bytes, size_t offset) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + offset;
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

// The dimensions of an IDX file of uint8 values with `ndim` dimensions, checked against its
// magic number and its size.
std::vector<uint32_t> IdxDims(const std::string& bytes, uint32_t magic, const std::string& path) {
  const size_t ndim = magic & 0xff;
  const size_t header = 4 * (1 + ndim);
  CROSSBOW_ENFORCE_VALUE(bytes.size() >= header && BigEndian(bytes, 0) == magic, path,
                         ": not an IDX file of ", ndim, "-d uint8 data (magic number 0x0000080",
                         ndim, " expected)");
  std::vector<uint32_t> dims;
  uint64_t values = 1;
  for (size_t i = 0; i < ndim; ++i) {
    dims.push_back(BigEndian(bytes, 4 + 4 * i));
    values *= dims.back();
  }
  CROSSBOW_ENFORCE_VALUE(bytes.size() - header == values, path, ": the header promises ", values,
                         " bytes of data, the file holds ", bytes.size() - header);
  return dims;
}

}  // namespace

ConvertSummary ConvertMnist(const std::string& images, const std::string& labels,
                            const std::string& db, const WriteOptions& options) {
  const std::string image_bytes = ReadFileMaybeGzipped(images);
  const std::string label_bytes = ReadFileMaybeGzipped(labels);
  const auto image_dims = IdxDims(image_bytes, kImagesMagic, images);
  const auto label_dims = IdxDims(label_bytes, kLabelsMagic, labels);
  CROSSBOW_ENFORCE_VALUE(image_dims[0] == label_dims[0], images, " holds ", image_dims[0],
                         " images but ", labels, " holds ", label_dims[0], " labels");
  const size_t pixels = size_t{image_dims[1]} * image_dims[2];
  ConvertSink sink(db, image_dims[0], options);
  Datum datum;
  datum.channels = 1;
  datum.height = static_cast<int32_t>(image_dims[1]);
  datum.width = static_cast<int32_t>(image_dims[2]);
  for (uint32_t i = 0; i < image_dims[0]; ++i) {
    datum.data.assign(image_bytes, 16 + i * pixels, pixels);
    datum.label = static_cast<uint8_t>(label_bytes[8 + i]);
    sink.Write(IndexKey(i), datum);
  }
  return sink.Finish();
}

}  // namespace crossbow::data
