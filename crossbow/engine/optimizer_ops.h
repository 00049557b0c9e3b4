#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "crossbow/core/net_def.h"
#include "crossbow/engine/learner_spec.h"

namespace crossbow {

// One blob of a learner's optimiser state: zeros at the start and at every restart, a step
// count ([1], zero likewise), or a copy of its parameter (Lookahead's slow weights).
struct OptimizerStateBlob {
  enum class Start { kZeros, kCount, kParam };
  std::string name, param;
  Start start;
};

// The update slice of a learner's training net for `solver` (docs/design/engine.md,
// "Optimisers"): one step operator per parameter (MomentumSGD or AdamW), then Lookahead's where
// lookahead_k > 0; and the state those operators keep, per parameter, named
//   sgd: <param>_momentum;  adamw, radam: <param>_exp_avg, <param>_exp_avg_sq, <param>_step;
//   lookahead: <param>_slow, <param>_lookahead_step.
// `decayed(param)` says whether weight decay applies to it. adamw's and radam's steps read beta1
// from the blob `momentum` (one float: the trainer's momentum schedule sets it).
struct OptimizerOps {
  std::vector<OperatorDef> ops;
  std::vector<OptimizerStateBlob> state;
};
OptimizerOps MakeOptimizerOps(const SolverConfig& solver, const std::vector<std::string>& params,
                              const std::map<std::string, std::string>& gradients,
                              const std::string& lr, const std::string& momentum,
                              const std::function<bool(const std::string&)>& decayed);

}  // namespace crossbow
