#pragma once

// What `crossbow convert` (and `crossbow db check --write-metadata`) records about a DB in a
// small JSON file beside it, so that opening the DB never has to read its records: the record
// count (checked against LMDB's own count at open), the label range with a key for each end,
// the key format, the class names' count and image size statistics.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "data/datum.h"

namespace crossbow::data {

struct SizeStats {
  int64_t count = 0, min = 0, max = 0;
  double sum = 0;
  void Add(int64_t value);
  double mean() const { return count > 0 ? sum / count : 0.0; }
};

struct DbMeta {
  int64_t records = 0;
  int32_t min_label = 0, max_label = -1;  // max < min: no label
  std::string min_key, max_key;           // a record with each end of the range
  // "counter": record i's key is "%08d" % i, alone or followed by "_..." (what the converters
  // write), so a record is found by its position without a list of keys; "any" otherwise.
  std::string key_format = "counter";
  int64_t encoded = 0;                // records holding JPEG/PNG/... bytes
  int64_t bytes = 0;                  // of the records' values
  SizeStats height, width, channels;  // of the records whose size is known
  int64_t classes = 0;                // lines of labels.txt; 0 when there is none
  // Runs of consecutive records (in key order) with one label: records / label_runs near 1 for
  // a shuffled DB, the class size for one in label order. -1: not recorded (older metadata).
  int64_t label_runs = -1;
};

// What the metadata keeps of one record.
struct RecordFacts {
  int32_t label = 0;
  int height = 0, width = 0, channels = 0;  // 0: not known
  bool encoded = false;
  int64_t bytes = 0;  // of its value
};
// Caffe's converter leaves an encoded record's sizes 0: a JPEG's header states them.
RecordFacts FactsOf(const Datum& datum, int64_t value_bytes);

// Builds a DbMeta from the records in key order.
class MetaBuilder {
 public:
  void Add(std::string_view key, const RecordFacts& record);
  void AddUnparsed(std::string_view key);  // counted, no label or size
  void SetClasses(int64_t classes) { meta_.classes = classes; }
  const DbMeta& meta() const { return meta_; }

 private:
  DbMeta meta_ = WithNoRuns();
  int32_t last_label_ = 0;
  static DbMeta WithNoRuns() {
    DbMeta m;
    m.label_runs = 0;
    return m;
  }
};

// DB/crossbow_meta.json for a folder DB; PATH.crossbow_meta.json for a single-file one.
std::string MetaPath(const std::string& db);
// Writes it through a temporary name and a rename, so that a reader never sees half of one.
void WriteMeta(const std::string& path, const DbMeta& meta);
// The DB's metadata; nullopt when it has none (a DB that Caffe made). Throws naming the file
// when it is there and not ours.
std::optional<DbMeta> ReadMeta(const std::string& db);

std::string MetaToJson(const DbMeta& meta);
// "1281167 records, labels 0..999, 1000 classes, 3x(64..500)x(80..500)": what ranks compare.
std::string MetaSummary(const DbMeta& meta);

// "%08d" of `index`: the key (or the key's start, before "_") of record `index` as the
// converters number them.
std::string CounterKey(int64_t index);
// Whether `key` is CounterKey(index), alone or followed by "_...".
bool IsCounterKey(std::string_view key, int64_t index);

// Lines of `db`/labels.txt that are not empty; 0 when there is none.
int64_t CountClassNames(const std::string& db);

}  // namespace crossbow::data
