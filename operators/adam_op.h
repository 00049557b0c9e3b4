#pragma once

#include "crossbow/core/operator.h"
#include "operators/optimizer_inputs.h"

namespace crossbow {

// AdamW's inputs: param, grad, exp_avg, exp_avg_sq (param's shape), step, lr and, optionally,
// beta1 (one float each).
template <typename ShapeOf, typename DtypeOf>
void EnforceAdamInputs(const OperatorDef& def, ShapeOf shape, DtypeOf dtype) {
  if (def.inputs.size() == 7) {
    EnforceOptimizerInputs(def, shape, dtype, 7, {1, 2, 3}, {4, 5, 6});
  } else {
    EnforceOptimizerInputs(def, shape, dtype, 6, {1, 2, 3}, {4, 5});
  }
}

// The arguments of AdamW, checked (a ValueError naming the operator).
struct AdamArgs {
  double beta1, beta2, eps, weight_decay;
  bool rectify, corrected_eps;
};
AdamArgs ReadAdamArgs(const OperatorDef& def);

// One AdamW (or, with rectify, RAdam) step on a plain parameter, in place (adam_step.h). The
// step count (input 4) counts the steps taken: the operator takes step count + 1 and then
// stores it, as PyTorch's state['step']. A beta1 input (7th) replaces the beta1 argument, so
// that the trainer's momentum schedule reaches the step.
class AdamWOp final : public Operator<CPUContext> {
 public:
  AdamWOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const AdamArgs args_;
};

}  // namespace crossbow
