#pragma once

#include <string>

#include "crossbow/engine/engine.h"
#include "crossbow/train/trainer.h"

namespace crossbow {

struct TrainerConfig {
  EngineOptions engine;
  TrainerOptions trainer;
};

// The options of python/crossbow/trainer.py's OPTIONS (the `crossbow train` flags) as one
// JSON object, into engine and trainer options, through the table of trainer_options.cc: a
// key it lacks is a ValueError with a did-you-mean, a wrong type or value names its key, and
// keys that only the Python side uses (the net, data loading) change nothing here. Each value
// is checked against its rule; what must hold of them together is CheckTrainerOptions'.
TrainerConfig ParseTrainerConfig(const std::string& json);

// Throws crossbow::ValueError for sources that cannot work: none to train on, a batch size of 0,
// examples that do not fit the net, a target accuracy without a test source.
void CheckTrainerSources(const TrainerOptions& options, const Shape& input_shape,
                         const BatchSource* train, const BatchSource* test);

}  // namespace crossbow
