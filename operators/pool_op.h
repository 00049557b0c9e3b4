#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

enum class PoolKind { kMax, kAverage, kGlobalAverage };

// Where the pooling windows of one operator fall on one input shape [N, C, H, W].
struct PoolWindow {
  dnnl::memory::dims kernel, strides, padding;
  Shape output;  // [N, C, (H + 2 pad - kernel) / stride + 1, (W + ...)]
};

// Reads kernel/stride/pad from the def (the whole image for global pooling); throws a
// ValueError naming the operator when the window does not fit the padded input.
PoolWindow ComputePoolWindow(const OperatorDef& def, PoolKind kind, const Shape& x);

// Y = pooling of X on oneDNN, in the layout oneDNN picks for X's; MaxPool of channels-last X in
// ChannelsLastMaxPool, Y channels-last. MaxPool's optional second output keeps the workspace
// (which input won each window) for the gradient.
template <PoolKind kKind>
class PoolOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  dnnl::memory::desc x_md_, y_md_, workspace_md_;
  PoolWindow window_;
  bool channels_last_ = false;  // ChannelsLastMaxPool runs, not primitive_
  dnnl::pooling_forward::primitive_desc pd_;
  dnnl::pooling_forward primitive_;
};

// dX from dY: MaxPoolGradient(X, Y, dY, workspace), the average poolings (X, dY).
template <PoolKind kKind>
class PoolGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  void EnforceOutputShapes(const Shape& y) const;  // Y (MaxPool) and dY must be [N, C, OH, OW]

  dnnl::memory::desc x_md_, y_md_, dx_md_, workspace_md_;
  PoolWindow window_;
  bool channels_last_ = false;  // ChannelsLastMaxPool runs, not primitive_
  dnnl::pooling_backward::primitive_desc pd_;
  dnnl::pooling_backward primitive_;
  ReorderCache dy_to_y_layout_;  // to the layout and type of Y (y_md_)
};

using MaxPoolOp = PoolOp<PoolKind::kMax>;
using AveragePoolOp = PoolOp<PoolKind::kAverage>;
using GlobalAveragePoolOp = PoolOp<PoolKind::kGlobalAverage>;
using MaxPoolGradientOp = PoolGradientOp<PoolKind::kMax>;
using AveragePoolGradientOp = PoolGradientOp<PoolKind::kAverage>;
using GlobalAveragePoolGradientOp = PoolGradientOp<PoolKind::kGlobalAverage>;

}  // namespace crossbow
