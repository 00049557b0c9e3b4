#pragma once

#include "crossbow/core/operator.h"
#include "operators/momentum_step.h"
#include "operators/optimizer_inputs.h"

namespace crossbow {

// Throws a ValueError naming the operator unless grad and momentum match param and lr is
// one float (optimizer_inputs.h).
template <typename ShapeOf, typename DtypeOf>
void EnforceSGDInputs(const OperatorDef& def, ShapeOf shape, DtypeOf dtype) {
  EnforceOptimizerInputs(def, shape, dtype, 4, {1, 2}, {3});
}

// Throws a ValueError naming the operator for a convention other than caffe2 or pytorch.
bool IsPyTorchConvention(const OperatorDef& def);

// One momentum SGD step on a plain parameter, in place, in either convention.
class MomentumSGDOp final : public Operator<CPUContext> {
 public:
  MomentumSGDOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  float momentum_, weight_decay_;
  bool nesterov_, pytorch_;
};

}  // namespace crossbow
