#pragma once

#include "crossbow/core/operator.h"
#include "operators/broadcast.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// How B [.., 1, ..] broadcasts to A for `def` (Mul or MulGradient); a ValueError naming the
// operator and both shapes where it does not (a dimension of B neither 1 nor A's, B of higher
// rank than A, A of rank above broadcast::kMaxRank).
broadcast::Layout MulLayout(const OperatorDef& def, const Shape& a, const Shape& b);

// Y = A * B element-wise, B broadcast to A's shape: SE's channel scaling (A [N, C, H, W] by
// B [N, C, 1, 1]) and a learned scalar gain (B [1]). A and B in any layout (read as plain fp32),
// Y plain fp32.
class MulOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache a_plain_, b_plain_;
};

// dA = dY * B (broadcast), dB = the sum of dY * A over the elements that share each of B's.
// Inputs A, B, dY; an unnamed output is not computed.
class MulGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache a_plain_, b_plain_, dy_plain_;
};

}  // namespace crossbow
