#pragma once

#include "crossbow/core/operator.h"
#include "operators/optimizer_inputs.h"

namespace crossbow {

// Lookahead's inputs: param, slow (param's shape), step (one float).
template <typename ShapeOf, typename DtypeOf>
void EnforceLookaheadInputs(const OperatorDef& def, ShapeOf shape, DtypeOf dtype) {
  EnforceOptimizerInputs(def, shape, dtype, 3, {1}, {2});
}

// Lookahead's k (>= 1) and alpha (in (0, 1]), checked (a ValueError naming the operator).
struct LookaheadArgs {
  int64_t k;
  float alpha;
};
LookaheadArgs ReadLookaheadArgs(const OperatorDef& def);

// Lookahead (Zhang et al. 2019), after the inner optimiser's step, in place: step += 1, and
// every k steps slow += alpha (param - slow); param = slow. The slow weights start as the
// parameter (the learner copies it).
class LookaheadOp final : public Operator<CPUContext> {
 public:
  LookaheadOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const LookaheadArgs args_;
};

}  // namespace crossbow
