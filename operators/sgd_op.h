#pragma once

#include "crossbow/core/operator.h"

namespace crossbow {

// Throws a ValueError naming the operator unless grad and momentum match param and lr is
// one float. shape(i) and dtype(i) describe input i (from tensors, or at shape inference).
template <typename ShapeOf, typename DtypeOf>
void EnforceSGDInputs(const OperatorDef& def, ShapeOf shape, DtypeOf dtype) {
  for (int i = 0; i < 4; ++i) {
    CROSSBOW_ENFORCE_VALUE(dtype(i) == DataType::kFloat32, def.Label(), ": input ", i, " '",
                           def.inputs[i], "' must be float32, got ", DataTypeName(dtype(i)));
  }
  for (int i : {1, 2}) {
    CROSSBOW_ENFORCE_VALUE(shape(i) == shape(0), def.Label(), ": input ", i, " '", def.inputs[i],
                           "' has shape ", ShapeString(shape(i)),
                           ", expected the shape of input 0 '", def.inputs[0], "' ",
                           ShapeString(shape(0)));
  }
  CROSSBOW_ENFORCE_VALUE(shape(3).size() <= 1 && NumElements(shape(3)) == 1, def.Label(),
                         ": input 3 '", def.inputs[3], "' has shape ", ShapeString(shape(3)),
                         ", expected [] or [1]");
}

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
