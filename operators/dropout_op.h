#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The `ratio` argument (default 0.5); a ValueError naming the operator unless it is in [0, 1).
float CheckedRatio(const OperatorDef& def);

// Inverted dropout. Training: Y = X * mask / (1 - ratio), mask ~ Bernoulli(1 - ratio) drawn
// from the context's generator, both in X's layout (element-wise over its bytes) and in float32
// (a bfloat16 X is converted first). Test: Y = X.
class DropoutOp final : public Operator<CPUContext> {
 public:
  DropoutOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float ratio_;
  const bool is_test_;
  ReorderCache to_float_;
};

// dX = dY * mask / (1 - ratio) (dX = dY in test mode), in the mask's layout.
class DropoutGradientOp final : public Operator<CPUContext> {
 public:
  DropoutGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float ratio_;
  const bool is_test_;
  ReorderCache dy_to_mask_layout_;
};

}  // namespace crossbow
