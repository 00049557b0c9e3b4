#pragma once

#include <string>
#include <vector>

#include "crossbow/engine/engine.h"
#include "crossbow/train/trainer.h"

namespace crossbow {

// What the table of training options (trainer_options.cc) says of one option: a key of the
// JSON object that python/crossbow/trainer.py sends, a Trainer(...) keyword argument and a
// `crossbow train` flag (--name-with-dashes).
struct TrainerOption {
  std::string name;
  std::string type;          // int, float, str, bool or floats (a list)
  std::string default_json;  // null: unset (no limit, none)
  std::string unit;          // images, epochs, seconds ... ("" where it has none)
  std::string rule;          // what a value must be, as the error says it ("> 0", "in [0, 1)")
  std::string doc;
  // Who reads it: engine, trainer, data (the loader) or net (the spec), both made by the Python
  // front end or crossbow_train, or python (the front end alone).
  std::string reader;
  bool per_rank;  // may differ between the ranks of an MPI job (where to log, the devices)
  // Model's and ModelBuilder.to_spec's (the Python library's): default_json but where the
  // table says the library differs on purpose (weight_decay: none unless asked).
  std::string library_default_json;
};

// The table, in the order of the flags. The default of an option read in C++ is its field's in
// a default-constructed EngineOptions or TrainerOptions.
std::vector<TrainerOption> TrainerOptionTable();

// For tests of the table's promise, that one entry makes everything (a flag with its doc, a
// keyword argument with its rule, a place among the options ranks compare and checkpoints
// keep): appends an engine option, a float at least `at_least`, as the table's last entry. No
// options struct has a field for it: the value a config was parsed with is TestOptionValue's.
// Only before the table is first read (what is made from it is made once); an error after.
void AddOptionForTest(const std::string& name, const std::string& doc, double at_least,
                      double default_value);
double TestOptionValue(const std::string& name);

// Each option's value against its rule; a ValueError names the option as a keyword and as a
// flag: "lr (--lr) must be finite and >= 0, got -1". The engine checks its options, the
// trainer its own; CheckTrainerOptions also checks what options must be together.
void CheckEngineOptions(const EngineOptions& options);

// The engine's options alone from a JSON object of them (the table's engine entries, e.g.
// {"sync": "localsgd", "learners": 2}), for the engine without a trainer: another key is a
// ValueError.
EngineOptions ParseEngineOptions(const std::string& json);
void CheckTrainerOptions(const TrainerOptions& options);

// The schedule a run trains with: poly, cosine and flatcos end where lr.max says, or else at
// the run's epochs.
LrPolicyOptions Schedule(const TrainerOptions& options);

// The options that the ranks of an MPI job must agree on (neither per_rank nor python), as
// (name, value as JSON).
std::vector<std::pair<std::string, std::string>> RankComparedOptions(const EngineOptions& engine,
                                                                     const TrainerOptions& trainer);
// The run's options a checkpoint keeps, and a resume compares with its own: those of
// RankComparedOptions but the ones that say how a process starts (resume).
std::vector<std::pair<std::string, std::string>> CheckpointedOptions(const EngineOptions& engine,
                                                                     const TrainerOptions& trainer);

}  // namespace crossbow
