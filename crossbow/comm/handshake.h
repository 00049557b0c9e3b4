#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "crossbow/comm/process_group.h"

namespace crossbow {

// What a rank must share with every other rank of the job: (name, value) pairs, in one order.
using RankSettings = std::vector<std::pair<std::string, std::string>>;

// The start-up check of an MPI job, before any training: every rank sends its settings, or the
// error that keeps it from starting (a shard it cannot read, a bad option). Every rank then
// throws the same crossbow::ValueError if a rank failed ("rank 2 cannot start: ...") or differs
// from rank 0 ("rank 1 differs from rank 0 in lr: 0.2, rank 0 has 0.1"); else returns.
void CheckRanksAgree(ProcessGroup& group, const RankSettings& settings, const std::string& error,
                     std::chrono::milliseconds timeout);

}  // namespace crossbow
