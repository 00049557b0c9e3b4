#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crossbow/comm/handshake.h"
#include "crossbow/train/trainer.h"

namespace crossbow {

// What every rank of an MPI job must share before training: the net and its parameter shapes,
// the devices and learners, the data sizes, every option that changes the run, and the
// checkpoint iteration it resumes from (-1: none).
RankSettings TrainerSettings(const LearnerSpec& spec, const EngineOptions& engine_options,
                             const TrainerOptions& options, const BatchSource& train,
                             const BatchSource* test, Engine& engine, int64_t resume_iteration);

// A checkpoint's tensors from every rank: each rank's learners go to rank 0, which returns them
// beside its own (and z); other ranks return nothing. `received` keeps the tensors that arrived.
// Each rank sends the `iteration` its tensors are of; rank 0 throws, naming the rank, where one
// differs from its own, so that no checkpoint mixes iterations.
std::vector<std::pair<std::string, const Tensor*>> GatherStateTensors(
    ProcessGroup& group, const std::vector<std::pair<std::string, const Tensor*>>& local,
    int64_t iteration, std::vector<std::map<std::string, Tensor>>* received,
    std::chrono::milliseconds timeout);

}  // namespace crossbow
