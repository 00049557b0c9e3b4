#pragma once

#include <string>
#include <vector>

namespace crossbow {

// One entry of the table of training options: a key of the JSON object that
// python/crossbow/trainer.py sends (its OPTIONS, the `crossbow train` flags).
struct TrainerOption {
  std::string name;
  std::string default_json;  // null: unset (no limit, none)
  bool python_only;          // read by the Python side alone (the net's spec, data loading)
};

// The table (trainer_options.cc), in the order of the flags. The defaults of the options read
// in C++ are those of a default-constructed TrainerConfig; ParseTrainerConfig reads through it.
std::vector<TrainerOption> TrainerOptionTable();

}  // namespace crossbow
