#pragma once

// What every converter shares: the progress line, the DB writer and the summary.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "data/converters.h"
#include "data/datum.h"
#include "data/db_meta.h"
#include "data/lmdb_io.h"

namespace crossbow::data {

// "<label> done/total (pct%) rate records/s, ETA 1m05s" as the console's status line, redrawn at
// most 4 times a second; where stderr is not a terminal, only the last one, as a line.
class Progress {
 public:
  Progress(std::string label, int64_t total, bool enabled);
  void Advance(int64_t count = 1);
  void Finish();  // the last line and a newline
  double seconds() const;
  std::string Text() const;

 private:
  void Draw();
  std::string label_;
  int64_t total_, done_ = 0;
  bool enabled_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// Writes the records of one conversion and keeps its summary. The DB is written under
// DB.incomplete and renamed to DB by Finish, with its metadata (data/db_meta.h) and class names
// (labels.txt) inside, so that a conversion that crashes never leaves what looks like a whole
// DB; a DB.incomplete left by one is replaced by the next.
class ConvertSink {
 public:
  ConvertSink(const std::string& db, int64_t total, const WriteOptions& options);
  ~ConvertSink();  // without Finish: removes DB.incomplete
  void Write(const std::string& key, const Datum& datum);
  void Skip(std::string where, std::string reason, std::string detail = "");
  // Written one a line to DB/labels.txt.
  void SetClassNames(std::vector<std::string> names) { class_names_ = std::move(names); }
  ConvertSummary Finish();  // commits, renames to DB and returns the summary

 private:
  std::string db_, temporary_;
  bool overwrite_, finished_ = false;
  std::unique_ptr<LmdbWriter> writer_;
  Progress progress_;
  ConvertSummary summary_;
  MetaBuilder meta_;
  std::vector<std::string> class_names_;
};

// "%08d", or "%08d_suffix" as Caffe's convert_imageset names its keys.
std::string IndexKey(int64_t index, const std::string& suffix = "");

// The whole file, gunzipped when it is gzipped; throws naming the path when unreadable.
std::string ReadFileMaybeGzipped(const std::string& path);

// "N: a reason, b reason" and then the first skips, one a line.
std::string DescribeSkips(const std::vector<SkippedRecord>& skipped);

}  // namespace crossbow::data
