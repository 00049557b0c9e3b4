#pragma once

#include <vector>

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Y = X1 + ... + Xn element-wise, in X1's layout and type (float32 or bfloat16); Add is the
// two-input case, and AddRelu (kRelu) Add with max(., 0) in the same pass. Inputs laid out or
// typed differently from X1 are reordered to X1's first (autodiff sums gradient contributions
// whose layouts differ), then the raw buffers are added in float32, block padding included,
// and bfloat16 is rounded once.
template <bool kRelu>
class SumOp final : public Operator<CPUContext> {
 public:
  SumOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  std::vector<ReorderCache> reorders_;
  std::vector<Tensor> scratch_;
  std::vector<const Tensor*> addends_;  // input i or its reordered copy
};

// Y = X, byte for byte in X's layout.
class CopyOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;
};

}  // namespace crossbow
