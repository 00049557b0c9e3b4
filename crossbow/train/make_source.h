#pragma once

#include <memory>
#include <string>

#include "crossbow/core/batch_source.h"

namespace crossbow {

// The batch source of the LMDB `db` that `crossbow train` (python/crossbow/trainer.py) and
// crossbow_train train on (`train`) or evaluate with, from the training options as one JSON
// object (what ParseTrainerConfig reads; an option it leaves out is at the table's default):
// the input preset of `augment` at the net's input side `input_size` (a preset's name; auto is
// an error, as only the front end knows the net's preset), `mean`, `std` and, when training,
// `min_crop_area` over it; shuffled and augmented when training; `batch_size`, `seed`,
// `workers`, `read_order` and `num_classes` (labels checked against it). Null for an empty
// `db` (no test source). Built in libcrossbow_train_data, beside the data library.
std::shared_ptr<BatchSource> MakeSource(const std::string& db, bool train,
                                        const std::string& options_json, int input_size);

}  // namespace crossbow
