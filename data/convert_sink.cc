#include "data/convert_sink.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "crossbow/core/console.h"
#include "crossbow/core/enforce.h"

namespace crossbow::data {
namespace {

constexpr size_t kSkipsListed = 20;
using Clock = std::chrono::steady_clock;

}  // namespace

Progress::Progress(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled), start_(Clock::now()) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::Advance(int64_t count) {
  done_ += count;
  if (!enabled_) return;
  const auto now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  Draw();
}

std::string Progress::Text() const {
  const double elapsed = seconds();
  char line[160];
  std::snprintf(line, sizeof(line), "%s %lld/%lld (%.0f%%) %.0f records/s", label_.c_str(),
                static_cast<long long>(done_), static_cast<long long>(total_),
                total_ > 0 ? 100.0 * done_ / total_ : 100.0, elapsed > 0 ? done_ / elapsed : 0.0);
  return line;
}

void Progress::Draw() { Console::Get().Status(Text()); }

void Progress::Finish() {
  if (!enabled_) return;
  Console& console = Console::Get();
  if (!console.terminal()) return console.Line(Text());  // a log file gets the last line only
  Draw();
  console.EndStatus();
}

ConvertSink::ConvertSink(const std::string& db, int64_t total, const WriteOptions& options)
    : writer_(db, options.overwrite), progress_(db, total, options.progress) {
  summary_.db = db;
}

void ConvertSink::Write(const std::string& key, const Datum& datum) {
  writer_.Put(key, SerializeDatum(datum));
  const bool first = summary_.max_label < summary_.min_label;
  summary_.min_label = first ? datum.label : std::min(summary_.min_label, datum.label);
  summary_.max_label = first ? datum.label : std::max(summary_.max_label, datum.label);
  progress_.Advance();
}

void ConvertSink::Skip(std::string where, std::string reason, std::string detail) {
  summary_.skipped.push_back({std::move(where), std::move(reason), std::move(detail)});
  progress_.Advance();
}

ConvertSummary ConvertSink::Finish() {
  writer_.Commit();
  progress_.Finish();
  summary_.written = writer_.written();
  summary_.seconds = progress_.seconds();
  return summary_;
}

std::string IndexKey(int64_t index, const std::string& suffix) {
  char digits[24];
  std::snprintf(digits, sizeof(digits), "%08lld", static_cast<long long>(index));
  return suffix.empty() ? digits : digits + ("_" + suffix);
}

std::string ReadFileMaybeGzipped(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), gzclose);
  CROSSBOW_ENFORCE(file != nullptr, "cannot open ", path);
  std::string bytes;
  char buffer[1 << 16];
  int count;
  while ((count = gzread(file.get(), buffer, sizeof(buffer))) > 0) bytes.append(buffer, count);
  int status;
  const char* message = gzerror(file.get(), &status);
  CROSSBOW_ENFORCE(count == 0 && (status == Z_OK || status == Z_STREAM_END), "cannot read ", path,
                   ": ", message);
  return bytes;
}

std::string DescribeSkips(const std::vector<SkippedRecord>& skipped) {
  std::map<std::string, int64_t> by_reason;
  for (const auto& skip : skipped) ++by_reason[skip.reason];
  std::ostringstream out;
  out << skipped.size();
  const char* separator = ": ";
  for (const auto& [reason, count] : by_reason) {
    out << separator << count << " " << reason;
    separator = ", ";
  }
  for (size_t i = 0; i < skipped.size() && i < kSkipsListed; ++i) {
    out << "\n  " << skipped[i].where << ": " << skipped[i].reason;
    if (!skipped[i].detail.empty()) out << " (" << skipped[i].detail << ")";
  }
  if (skipped.size() > kSkipsListed)
    out << "\n  ... and " << skipped.size() - kSkipsListed << " more";
  return out.str();
}

std::string ConvertSummary::ToString() const {
  std::ostringstream out;
  out << "wrote " << written << " records to " << db << " in " << seconds << " s ("
      << (seconds > 0 ? static_cast<int64_t>(written / seconds) : written) << " records/s)";
  if (max_label >= min_label) out << ", labels " << min_label << ".." << max_label;
  out << "; skipped " << DescribeSkips(skipped);
  return out.str();
}

}  // namespace crossbow::data
