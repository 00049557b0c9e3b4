#pragma once

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// BlurPool's stride (argument `stride`, default 2; a ValueError naming `def` below 1).
int64_t BlurStride(const OperatorDef& def);
// Y's shape for X [N, C, H, W] with H, W >= 2 (the one-pixel reflection needs two); ValueErrors
// name the operator and the input.
Shape BlurPoolShape(const OperatorDef& def, const Shape& x);

// Anti-aliased downsampling (Zhang 2019): each channel blurred by the fixed binomial filter
// [1, 2, 1] x [1, 2, 1] / 16 over a one-pixel reflection of its edges, then sampled every
// `stride` pixels (blur_pool.h). X in any layout (read as plain fp32), Y plain fp32.
class BlurPoolOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache x_plain_;
};

// dX from dY; X gives only its shape.
class BlurPoolGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache dy_plain_;
};

}  // namespace crossbow
