#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Y = f(X) by oneDNN's element-wise primitive `kAlgorithm`, in X's layout and type (blocked
// stays blocked, bf16 stays bf16).
template <dnnl::algorithm kAlgorithm>
class EltwiseOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc md_;
  dnnl::eltwise_forward primitive_;
};

// dX = f'(.) dY by oneDNN's backward primitive `kAlgorithm`, from input 0: X, or Y where
// kAlgorithm is a `_use_dst_for_bwd` one (so that the forward operator may run in place).
// dX takes input 0's layout; a dY in another layout is reordered first.
template <dnnl::algorithm kAlgorithm>
class EltwiseGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc md_;
  dnnl::eltwise_backward primitive_;
  ReorderCache dy_in_layout_;
};

}  // namespace crossbow
