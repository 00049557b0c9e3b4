#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crossbow/core/tensor.h"
#include "crossbow/engine/engine.h"

namespace crossbow {

// The counters of a training run, stored beside the engine's tensors.
struct CheckpointInfo {
  std::string net;         // the learner spec's name; a checkpoint of another net is refused
  std::string net_source;  // the spec's source: where the net came from ("" where unknown)
  std::string sync;        // "sma", "ssgd" or "sgd"
  int learners_per_device = 1;
  int64_t iteration = 0;  // engine iterations done
  int64_t images = 0;     // training images consumed: the position of the LR schedule
  double elapsed_s = 0;   // training time so far (time-to-accuracy continues across resumes)
  double lr = 0;          // the rate of the last iteration
  double lr_peak = 0;     // the highest rate since the learners last restarted from z (SMA)
  double best_top1 = 0;
  double time_to_accuracy_s = -1;  // -1 until the target accuracy was reached
  // The options of the run that wrote it, as JSON (CheckpointedOptions); none in checkpoints
  // of before they were kept.
  std::map<std::string, std::string> options;
};

struct Checkpoint {
  CheckpointInfo info;
  std::string train_state;                // BatchSource::SaveState of the training source
  std::map<std::string, Tensor> tensors;  // Engine::StateTensors' names
};

// One file holds everything (the engine's tensors, the counters as JSON and the data
// position, each a tensor), written atomically with SaveTensors: a crash mid-write leaves
// the previous checkpoint in place.
void WriteCheckpoint(const std::string& path, const CheckpointInfo& info,
                     const std::string& train_state,
                     const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// Throws crossbow::Error naming the path for missing, truncated, corrupt and foreign files
// (a tensor file without the counters, e.g. a Learner::Save file, is foreign too).
Checkpoint ReadCheckpoint(const std::string& path);

// Throws unless `checkpoint` belongs to net `net` and holds every "z/" tensor of `current`
// (Engine::StateTensors of the engine to restore) with the same shape.
void CheckCompatible(const Checkpoint& checkpoint, const std::string& path, const std::string& net,
                     const std::vector<std::pair<std::string, const Tensor*>>& current);

// Loads the average model z of a checkpoint into a one-learner engine and evaluates it on one
// epoch of `test` (`crossbow eval`).
EvalResult EvaluateCheckpoint(const LearnerSpec& spec, const std::string& path, BatchSource* test);

// The checkpoint file of a folder, and removal of temporaries that a killed writer left.
std::string CheckpointPath(const std::string& dir);
void RemoveStaleTemporaries(const std::string& dir);

}  // namespace crossbow
