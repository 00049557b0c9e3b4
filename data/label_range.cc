#include "data/label_range.h"

#include <glog/logging.h>

#include "crossbow/core/enforce.h"
#include "data/db_meta.h"

namespace crossbow::data {
namespace {

constexpr char kFlag[] = "num_classes, --num-classes";

}  // namespace

std::string LabelError(const std::string& db, const std::string& key, int32_t label,
                       int num_classes) {
  return detail::Concat(db, ": record ", key, " has label ", label, ", outside [0, ", num_classes,
                        ") for a net of ", num_classes, " classes (", kFlag, ")");
}

void CheckLabels(const LmdbReader& reader, int num_classes) {
  const std::string& db = reader.path();
  const int64_t names = CountClassNames(db);
  CROSSBOW_ENFORCE_VALUE(names <= num_classes, db, "/labels.txt names ", names,
                         " classes, but the net has ", num_classes, " (", kFlag, ")");
  const std::optional<DbMeta>& meta = reader.meta();
  if (!meta) {
    LOG(INFO) << db << " has no metadata (" << MetaPath(db)
              << "): labels are checked as records are read; crossbow db check " << db
              << " --write-metadata writes it (one full scan)";
    return;
  }
  if (meta->max_label < meta->min_label) return;  // nothing parsed: the loader reports records
  const std::string from = " (from " + MetaPath(db) + ")";
  CROSSBOW_ENFORCE_VALUE(meta->min_label >= 0,
                         LabelError(db, meta->min_key, meta->min_label, num_classes), from);
  CROSSBOW_ENFORCE_VALUE(meta->max_label < num_classes,
                         LabelError(db, meta->max_key, meta->max_label, num_classes),
                         "; the DB's labels span ", meta->min_label, "..", meta->max_label, from);
}

}  // namespace crossbow::data
