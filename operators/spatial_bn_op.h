#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Batch normalisation of [N, C, H, W] per channel on oneDNN; Y keeps X's layout. Training
// normalises with the batch statistics, saves them for the gradient and folds them into the
// running statistics in place; is_test normalises with the running statistics.
class SpatialBNOp final : public Operator<CPUContext> {
 public:
  SpatialBNOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  void UpdateRunningStats(const Tensor& mean, const Tensor& var, int64_t count);

  const float epsilon_, momentum_;
  const bool is_test_;
  dnnl::memory::desc x_md_, c_md_;  // c_md_: the [C] statistics and parameters
  dnnl::batch_normalization_forward primitive_;
  Tensor mean_scratch_, var_scratch_;  // batch statistics when outputs 3, 4 are unnamed
};

// dX, dscale, dbias from X, scale, the saved batch statistics and dY.
class SpatialBNGradientOp final : public Operator<CPUContext> {
 public:
  SpatialBNGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float epsilon_;
  dnnl::memory::desc x_md_, c_md_;  // c_md_: the [C] statistics and parameters
  dnnl::batch_normalization_backward primitive_;
  ReorderCache dy_to_x_layout_;
  Tensor dx_scratch_, dscale_scratch_, dbias_scratch_;  // for unnamed outputs
};

}  // namespace crossbow
