#pragma once

#include <initializer_list>

#include "crossbow/core/operator.h"

namespace crossbow {

// The input checks of the optimiser steps (MomentumSGD, AdamW, Lookahead): a ValueError naming
// the operator unless all `count` inputs are float32, the inputs `like_param` have input 0's
// shape and the inputs `scalars` (a rate, a step count) hold one float. shape(i) and dtype(i)
// describe input i (from tensors, or at shape inference).
template <typename ShapeOf, typename DtypeOf>
void EnforceOptimizerInputs(const OperatorDef& def, ShapeOf shape, DtypeOf dtype, int count,
                            std::initializer_list<int> like_param,
                            std::initializer_list<int> scalars) {
  for (int i = 0; i < count; ++i) {
    CROSSBOW_ENFORCE_VALUE(dtype(i) == DataType::kFloat32, def.Label(), ": input ", i, " '",
                           def.inputs[i], "' must be float32, got ", DataTypeName(dtype(i)));
  }
  for (int i : like_param) {
    CROSSBOW_ENFORCE_VALUE(shape(i) == shape(0), def.Label(), ": input ", i, " '", def.inputs[i],
                           "' has shape ", ShapeString(shape(i)),
                           ", expected the shape of input 0 '", def.inputs[0], "' ",
                           ShapeString(shape(0)));
  }
  for (int i : scalars) {
    CROSSBOW_ENFORCE_VALUE(shape(i).size() <= 1 && NumElements(shape(i)) == 1, def.Label(),
                           ": input ", i, " '", def.inputs[i], "' has shape ",
                           ShapeString(shape(i)), ", expected [] or [1]");
  }
}

// A running operator's input i as the checks above read it: its shape, its type.
struct InputShapeOf {
  const OperatorBase& op;
  const Shape& operator()(int i) const { return op.Input(i).shape(); }
};
struct InputTypeOf {
  const OperatorBase& op;
  DataType operator()(int i) const { return op.Input(i).dtype(); }
};

// Each of the operator's first `count` inputs must be plain row-major (the kernels walk them as
// flat arrays).
inline void EnforcePlainInputs(const OperatorBase& op, int count) {
  for (int i = 0; i < count; ++i) {
    CROSSBOW_ENFORCE_VALUE(op.Input(i).is_plain(), op.def().Label(), ": input ", i, " '",
                           op.def().inputs[i], "' must be plain row-major, got ",
                           op.Input(i).DebugString());
  }
}

}  // namespace crossbow
