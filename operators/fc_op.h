#pragma once

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"
#include "operators/weight_gradient.h"
#include "operators/weighted_forward.h"

namespace crossbow {

// Y's shape [N, M] for X [N, ...] (flattened to [N, K]), W [M, K] and, when given, b [M].
// Throws a ValueError naming the operator, the input and both shapes on a mismatch.
Shape FCOutputShape(const OperatorDef& def, const Shape& x, const Shape& w, const Shape* b);

// Y = X W^T + b on oneDNN's inner product; Y is plain [N, M]. In the context's precision bf16,
// X and W (and, backwards, dY) are read as bfloat16, Y (dW, db) written in fp32 and dX in X's
// type.
class FCOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  void Build(const dnnl::memory::desc& x_md);
  const Tensor* Bias() { return InputSize() == 3 ? &Input(2) : nullptr; }

  Shape y_shape_;
  WeightedForwardPass forward_;
};

// (X, W, dY) -> (dW, db, dX): dW and db plain, dX in X's layout and type. db and dX may be unnamed.
class FCGradientOp final : public Operator<CPUContext> {
 public:
  FCGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  void Build(const dnnl::memory::desc& x_md, const dnnl::memory::desc& dy_md);
  void BackwardData(const Tensor& w, const dnnl::memory& dy);

  bool want_weights_, want_bias_, want_data_;
  dnnl::memory::desc x_md_, dy_md_, dy_in_md_, src_md_, src_in_md_, w_plain_md_, bd_w_md_;
  Shape w_shape_;
  WeightGradientPass weights_;
  dnnl::inner_product_backward_data data_primitive_;
  ReorderCache x_to_in_, dy_to_in_, w_for_data_;
};

}  // namespace crossbow
