#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Y = max(X, 0) on oneDNN, in X's layout (blocked stays blocked).
class ReluOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc md_;
  dnnl::eltwise_forward primitive_;
};

// dX = dY * (Y > 0), from the output Y so that Relu may run in place. dX takes Y's layout;
// a dY in another layout is reordered first (oneDNN has only a slow reference kernel for
// mixed layouts).
class ReluGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc y_md_;
  dnnl::eltwise_backward primitive_;
  ReorderCache to_y_layout_;
  Tensor dy_scratch_;
};

}  // namespace crossbow
