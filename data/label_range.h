#pragma once

#include <cstdint>
#include <string>

namespace crossbow::data {

// The labels an LMDB of Datum records holds: the smallest and largest with a record key for
// each, and how many records did not parse. With `labels.txt` beside data.mdb (what
// `crossbow convert imageset` writes) `names` counts its lines, the classes of the data set.
struct LabelRange {
  int64_t records = 0, unparsed = 0;
  int32_t min = 0, max = -1;  // max < min: no record parsed
  std::string min_key, max_key;
  int64_t names = 0;  // lines of labels.txt; 0 when there is none
};

LabelRange ScanLabels(const std::string& db);

// Throws a ValueError that names the DB and the offending record's key when a label of `db` lies
// outside [0, num_classes), or when labels.txt names more classes than that.
void CheckLabels(const std::string& db, int num_classes);

}  // namespace crossbow::data
