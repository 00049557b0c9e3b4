// Per-channel pixel statistics of a DB, for normalising its inputs.
#include <cmath>
#include <iomanip>
#include <opencv2/imgcodecs.hpp>  // the IMREAD_* flags
#include <sstream>

#include "crossbow/core/enforce.h"
#include "data/convert_sink.h"
#include "data/image_codecs.h"

namespace crossbow::data {
namespace {

constexpr int64_t kChunk = 1024;  // records read sequentially, then measured in parallel

struct RecordSums {
  std::vector<double> sum, square;  // per channel; empty when the record is corrupt
  double count = 0;                 // pixels per channel
  std::string why;
};

// Adds `count` values, `stride` apart, starting at `values`.
template <typename T>
void Accumulate(const T* values, int64_t count, int64_t stride, double* sum, double* square) {
  for (int64_t i = 0; i < count; ++i) {
    const double v = values[i * stride];
    *sum += v;
    *square += v * v;
  }
}

RecordSums Measure(std::string_view bytes) {
  RecordSums out;
  Datum datum;
  if (!ParseDatum(bytes.data(), bytes.size(), &datum, &out.why)) return out;
  if (datum.encoded) {
    const cv::Mat buffer(1, static_cast<int>(datum.data.size()), CV_8U, datum.data.data());
    cv::Mat image;
    try {
      image = Codecs().decode(buffer, cv::IMREAD_ANYCOLOR);
    } catch (const std::exception& e) {  // cv::Exception, or crossbow::Error: no codecs
      out.why = e.what();
    }
    if (image.empty()) {
      if (out.why.empty()) out.why = "undecodable image";
      return out;
    }
    const int channels = image.channels();
    out.count = static_cast<double>(image.total());
    out.sum.assign(channels, 0.0);
    out.square.assign(channels, 0.0);
    for (int c = 0; c < channels; ++c) {
      Accumulate(image.ptr<uint8_t>() + c, image.total(), channels, &out.sum[c], &out.square[c]);
    }
    return out;
  }
  if (!CheckRawDatum(datum, &out.why)) return out;
  const int64_t plane = int64_t{datum.height} * datum.width;
  out.count = static_cast<double>(plane);
  out.sum.assign(datum.channels, 0.0);
  out.square.assign(datum.channels, 0.0);
  for (int c = 0; c < datum.channels; ++c) {
    if (datum.data.empty()) {
      Accumulate(datum.float_data.data() + c * plane, plane, 1, &out.sum[c], &out.square[c]);
    } else {
      const auto* pixels = reinterpret_cast<const uint8_t*>(datum.data.data());
      Accumulate(pixels + c * plane, plane, 1, &out.sum[c], &out.square[c]);
    }
  }
  return out;
}

}  // namespace

ChannelStats ComputeChannelStats(const std::string& db, bool progress) {
  LmdbReader reader(db);
  LmdbReader::Transaction txn(reader);
  Progress bar(db, reader.size(), progress);
  ChannelStats stats;
  std::vector<double> sum, square;
  double count = 0;
  std::vector<std::string> values(kChunk);
  std::vector<RecordSums> measured(kChunk);
  for (int64_t begin = 0; begin < reader.size(); begin += kChunk) {
    const int64_t end = std::min(reader.size(), begin + kChunk);
    for (int64_t i = begin; i < end; ++i) values[i - begin] = std::string(txn.Get(i));
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t i = begin; i < end; ++i) measured[i - begin] = Measure(values[i - begin]);
    for (int64_t i = begin; i < end; ++i) {  // in record order, so that sums are reproducible
      RecordSums& record = measured[i - begin];
      if (record.why.empty() && !sum.empty() && record.sum.size() != sum.size()) {
        record.why = std::to_string(record.sum.size()) + " channels, the DB's first record has " +
                     std::to_string(sum.size());
      }
      if (!record.why.empty()) {
        stats.skipped.push_back({"key " + reader.key(i), "corrupt record", record.why});
        continue;
      }
      if (sum.empty()) {
        sum.assign(record.sum.size(), 0.0);
        square = sum;
      }
      for (size_t c = 0; c < sum.size(); ++c) {
        sum[c] += record.sum[c];
        square[c] += record.square[c];
      }
      count += record.count;
      ++stats.records;
    }
    bar.Advance(end - begin);
  }
  bar.Finish();
  CROSSBOW_ENFORCE(stats.records > 0, "no readable record in ", db, " to take statistics of",
                   stats.skipped.empty()
                       ? std::string()
                       : " (" + stats.skipped[0].where + ": " + stats.skipped[0].detail + ")");
  for (size_t c = 0; c < sum.size(); ++c) {
    stats.mean.push_back(sum[c] / count);
    stats.std.push_back(
        std::sqrt(std::max(0.0, square[c] / count - stats.mean[c] * stats.mean[c])));
  }
  return stats;
}

std::string ChannelStats::ToString() const {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4);
  auto list = [&out](const std::vector<double>& values, double scale) {
    for (size_t c = 0; c < values.size(); ++c) out << (c ? ", " : "") << values[c] * scale;
  };
  out << "records " << records << ", channels " << mean.size() << " (in record order)\nmean ";
  list(mean, 1);
  out << "\nstd  ";
  list(std, 1);
  out << "\nmean/255 ";
  list(mean, 1 / 255.0);
  out << "\nstd/255  ";
  list(std, 1 / 255.0);
  out << "\nskipped " << DescribeSkips(skipped);
  return out.str();
}

}  // namespace crossbow::data
