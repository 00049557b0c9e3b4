#include "data/convert_sink.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "crossbow/core/console.h"
#include "crossbow/core/enforce.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSkipsListed = 20;
using Clock = std::chrono::steady_clock;

// What a DB folder that a converter wrote holds: anything else means it is not one.
bool OnlyDbFiles(const std::string& db) {
  static const std::set<std::string> ours = {"data.mdb", "lock.mdb", "labels.txt",
                                             "crossbow_meta.json"};
  for (const auto& entry : fs::directory_iterator(db)) {
    if (!ours.count(entry.path().filename().string())) return false;
  }
  return true;
}

// Refuses a path that holds a DB (unless `overwrite`) or something else.
void CheckReplaceable(const std::string& db, bool overwrite) {
  if (!fs::exists(db)) return;
  CROSSBOW_ENFORCE(fs::is_directory(db), "cannot create LMDB ", db,
                   ": it exists and is not a folder");
  CROSSBOW_ENFORCE(!fs::exists(fs::path(db) / "data.mdb") || overwrite, "LMDB ", db,
                   " already exists (--overwrite replaces it)");
  CROSSBOW_ENFORCE(OnlyDbFiles(db), "cannot write LMDB ", db,
                   ": the folder holds files that are not a DB's; remove them or name another");
}

// Moves the finished DB in place of what `db` held.
void ReplaceWith(const std::string& finished, const std::string& db, bool overwrite) {
  CheckReplaceable(db, overwrite);  // again: the conversion took time
  std::error_code ec;
  fs::remove_all(db, ec);
  CROSSBOW_ENFORCE(!ec, "cannot replace ", db, ": ", ec.message());
  fs::rename(finished, db, ec);
  CROSSBOW_ENFORCE(!ec, "cannot rename ", finished, " to ", db, ": ", ec.message());
}

// "1h02m", "3m05s", "12s".
std::string Duration(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else if (s >= 60) {
    std::snprintf(text, sizeof(text), "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(text, sizeof(text), "%llds", static_cast<long long>(s));
  }
  return text;
}

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
  const double rate = elapsed > 0 ? done_ / elapsed : 0.0;
  char line[160];
  std::snprintf(line, sizeof(line), "%s %lld/%lld (%.0f%%) %.0f records/s", label_.c_str(),
                static_cast<long long>(done_), static_cast<long long>(total_),
                total_ > 0 ? 100.0 * done_ / total_ : 100.0, rate);
  if (done_ >= total_ || rate <= 0) return line;
  return line + (", ETA " + Duration((total_ - done_) / rate));
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
    : db_(db),
      temporary_(db + ".incomplete"),
      overwrite_(options.overwrite),
      progress_(db, total, options.progress) {
  CheckReplaceable(db, overwrite_);
  std::error_code ec;
  fs::remove_all(temporary_, ec);  // what a crashed conversion left
  writer_ = std::make_unique<LmdbWriter>(temporary_);
  summary_.db = db;
}

ConvertSink::~ConvertSink() {
  if (finished_) return;
  writer_.reset();
  std::error_code ec;
  fs::remove_all(temporary_, ec);
}

void ConvertSink::Write(const std::string& key, const Datum& datum) {
  const std::string bytes = SerializeDatum(datum);
  writer_->Put(key, bytes);
  meta_.Add(key, FactsOf(datum, static_cast<int64_t>(bytes.size())));
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
  writer_->Commit();
  summary_.written = writer_->written();
  writer_.reset();
  if (!class_names_.empty()) {
    std::ofstream labels(fs::path(temporary_) / "labels.txt");
    for (const auto& name : class_names_) labels << name << "\n";
    CROSSBOW_ENFORCE(labels.good(), "cannot write ", temporary_, "/labels.txt");
  }
  meta_.SetClasses(static_cast<int64_t>(class_names_.size()));
  WriteMeta(MetaPath(temporary_), meta_.meta());
  ReplaceWith(temporary_, db_, overwrite_);
  finished_ = true;
  progress_.Finish();
  summary_.seconds = progress_.seconds();
  return summary_;
}

std::string IndexKey(int64_t index, const std::string& suffix) {
  return suffix.empty() ? CounterKey(index) : CounterKey(index) + "_" + suffix;
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
