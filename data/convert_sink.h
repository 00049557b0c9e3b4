#pragma once

// What every converter shares: the progress line, the DB writer and the summary.

#include <chrono>
#include <string>

#include "data/converters.h"
#include "data/datum.h"
#include "data/lmdb_io.h"

namespace crossbow::data {

// "<label> done/total (pct%) rate records/s" as the console's status line, redrawn at most 4
// times a second; where stderr is not a terminal, only the last one, as a line.
class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled);
  void Advance(int64_t count = 1);
  void Finish();  // the last line and a newline
  double seconds() const;

 private:
  std::string Text() const;
  void Draw();
  std::string label_;
  int64_t total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// Writes the records of one conversion and keeps its summary.
class ConvertSink {
 public:
  ConvertSink(const std::string& db, int64_t total, const WriteOptions& options);
  void Write(const std::string& key, const Datum& datum);
  void Skip(std::string where, std::string reason, std::string detail = "");
  ConvertSummary Finish();  // commits and returns the summary

 private:
  LmdbWriter writer_;
  Progress progress_;
  ConvertSummary summary_;
};

// "%08d", or "%08d_suffix" as Caffe's convert_imageset names its keys.
std::string IndexKey(int64_t index, const std::string& suffix = "");

// The whole file, gunzipped when it is gzipped; throws naming the path when unreadable.
std::string ReadFileMaybeGzipped(const std::string& path);

// "N: a reason, b reason" and then the first skips, one a line.
std::string DescribeSkips(const std::vector<SkippedRecord>& skipped);

}  // namespace crossbow::data
