#pragma once

#include <cstdint>
#include <string>

#include "data/lmdb_io.h"

namespace crossbow::data {

// The check of a DB's labels against a net of `num_classes` classes before training: labels.txt
// (the class names beside the DB) must not name more, and with metadata (data/db_meta.h) its
// label range must lie in [0, num_classes), else a ValueError names the DB and a record with the
// offending label. Reads no record: without metadata the loader checks each label as it reads
// the record (LabelError), and this logs one line saying how to write the metadata.
void CheckLabels(const LmdbReader& reader, int num_classes);

// The error of a record whose label is outside [0, num_classes): the DB, its key, the label.
std::string LabelError(const std::string& db, const std::string& key, int32_t label,
                       int num_classes);

}  // namespace crossbow::data
