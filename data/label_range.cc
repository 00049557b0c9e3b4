#include "data/label_range.h"

#include <filesystem>
#include <fstream>

#include "crossbow/core/enforce.h"
#include "data/datum.h"
#include "data/lmdb_io.h"

namespace crossbow::data {

LabelRange ScanLabels(const std::string& db) {
  LmdbReader reader(db);
  LmdbReader::Transaction transaction(reader);
  LabelRange range;
  range.records = reader.size();
  for (int64_t i = 0; i < reader.size(); ++i) {
    const std::string_view bytes = transaction.Get(i);
    Datum datum;
    if (!ParseDatum(bytes.data(), bytes.size(), &datum, nullptr)) {
      ++range.unparsed;
      continue;
    }
    if (range.max < range.min || datum.label < range.min) {
      range.min = datum.label;
      range.min_key = reader.key(i);
    }
    if (datum.label > range.max) {
      range.max = datum.label;
      range.max_key = reader.key(i);
    }
  }
  std::ifstream names(std::filesystem::path(db) / "labels.txt");
  for (std::string line; std::getline(names, line);) range.names += !line.empty();
  return range;
}

void CheckLabels(const std::string& db, int num_classes) {
  const char* flag = "num_classes, --num-classes";
  const LabelRange range = ScanLabels(db);
  CROSSBOW_ENFORCE_VALUE(range.names <= num_classes, db, "/labels.txt names ", range.names,
                         " classes, but the net has ", num_classes, " (", flag, ")");
  if (range.max < range.min) return;  // nothing parsed: the loader reports the records
  CROSSBOW_ENFORCE_VALUE(range.min >= 0, db, ": record ", range.min_key, " has label ", range.min,
                         "; labels must be in [0, ", num_classes, ")");
  CROSSBOW_ENFORCE_VALUE(range.max < num_classes, db, ": record ", range.max_key, " has label ",
                         range.max, ", outside [0, ", num_classes, ") for a net of ", num_classes,
                         " classes (", flag, "); the DB's labels span ", range.min, "..",
                         range.max);
}

}  // namespace crossbow::data
