#pragma once

#include <string>

#include "crossbow/engine/engine.h"
#include "crossbow/engine/trainer.h"

namespace crossbow {

struct TrainerConfig {
  EngineOptions engine;
  TrainerOptions trainer;
};

// The options of python/crossbow/trainer.py's OPTIONS (the `crossbow train` flags) as one
// JSON object, into engine and trainer options. Keys that only the Python side uses (batch
// size, data loading, the net) are not read here. A wrong type or value names its key.
TrainerConfig ParseTrainerConfig(const std::string& json);

// Throws crossbow::ValueError for options that cannot work (no stop condition, a batch size
// of 0, sources whose examples do not fit the net, resume without a directory ...).
void CheckTrainerOptions(const TrainerOptions& options, const Shape& input_shape,
                         const BatchSource* train, const BatchSource* test);

}  // namespace crossbow
