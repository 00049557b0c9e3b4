#pragma once

#include <map>
#include <string>

#include "crossbow/engine/engine.h"

namespace crossbow {

// What EngineOptions leaves auto (0) to the synchroniser and the learner count: its period and
// alpha (docs/design/engine.md, "Defaults: the period and alpha"). The option table
// (trainer_options.cc) documents them from here in --help.

// Each periodic synchroniser's own sync_period; the others synchronise every iteration.
const std::map<std::string, int>& SyncPeriodDefaults();

// alpha auto: 1/N for N >= 2 learners, kOneLearnerAlpha for one.
constexpr double kOneLearnerAlpha = 0.1;
double AutoAlpha(int learners);

// `options` with sync_period auto as its synchroniser's own and alpha auto from `learners`, the
// learners of the whole job. The engine makes its synchroniser from these, again whenever its
// learner count changes (the autotuner).
EngineOptions WithSyncDefaults(EngineOptions options, int learners);

}  // namespace crossbow
