#pragma once

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Shape rules shared by the CPU and CUDA kernels; each throws a ValueError naming the operator.
// [N, prod(other dims)] for Flatten.
Shape FlattenedShape(const OperatorDef& def, const Shape& x);
// X's shape under Reshape's `shape` argument (0 keeps X's dimension, one -1 is inferred).
Shape ReshapedShape(const OperatorDef& def, const Shape& x);
// For ReshapeLike: dY must have as many elements as X.
void EnforceSameSize(const OperatorDef& def, const Shape& dy, const Shape& x);

// Flatten, Reshape and ReshapeLike: Y holds X's elements in row-major order under another
// shape of the same size, always plain (blocked inputs are reordered straight into Y).
// None runs in place: their gradients need X's shape.

// Y = X as [N, prod(other dims)].
class FlattenOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache to_plain_;
};

// Y = X under the `shape` argument (0 keeps that dimension of X, one -1 is inferred).
class ReshapeOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  Shape x_shape_, y_shape_;
  ReorderCache to_plain_;
};

// dX = dY under X's shape: the gradient of Flatten and Reshape.
class ReshapeLikeOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache to_plain_;
};

}  // namespace crossbow
