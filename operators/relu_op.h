#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"

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

// dX = dY * (Y > 0), from the output Y so that Relu may run in place.
class ReluGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc y_md_, dy_md_;
  dnnl::eltwise_backward primitive_;
};

}  // namespace crossbow
