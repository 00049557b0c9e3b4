#pragma once

#include "crossbow/core/operator.h"

namespace crossbow {

// One momentum SGD step on a plain parameter, in place:
//   g = grad + weight_decay * param;  v = momentum * v - lr * g;
//   param += v                                (classical)
//   param += momentum * v - lr * g            (Nesterov, with the new v)
class MomentumSGDOp final : public Operator<CPUContext> {
 public:
  MomentumSGDOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  float momentum_, weight_decay_;
  bool nesterov_;
};

}  // namespace crossbow
