#pragma once

#include <initializer_list>

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Throws a ValueError naming `def` unless input 0 is [N, C, H, W] and every input in
// `per_channel` is [C]; `shape_of(i)` gives input i's shape (at run time or in shape inference).
template <typename ShapeOf>
void EnforceBNShapes(const OperatorDef& def, ShapeOf shape_of,
                     std::initializer_list<int> per_channel) {
  const Shape& x = shape_of(0);
  CROSSBOW_ENFORCE_VALUE(x.size() == 4, def.Label(), ": input 0 '", def.inputs[0], "' has shape ",
                         ShapeString(x), ", expected [N, C, H, W]");
  for (int i : per_channel) {
    CROSSBOW_ENFORCE_VALUE(shape_of(i).size() == 1 && shape_of(i)[0] == x[1], def.Label(),
                           ": input ", i, " '", def.inputs[i], "' has shape ",
                           ShapeString(shape_of(i)), ", expected [", x[1], "] (the channels of ",
                           def.inputs[0], " ", ShapeString(x), ")");
  }
}

// Output i of `op`, or `scratch` when the def leaves it unnamed.
inline Tensor* OutputOr(OperatorBase* op, int i, Tensor* scratch) {
  return op->HasOutput(i) ? op->Output(i) : scratch;
}

// Batch normalisation of [N, C, H, W] per channel on oneDNN, or ChannelsLastBN where X is
// channels-last (nhwc); Y keeps X's layout. Training
// normalises with the batch statistics, saves them for the gradient and folds them into the
// running statistics in place; is_test normalises with the running statistics. kRelu is
// SpatialBNRelu: Y = max(BN(X), 0) in the same pass (oneDNN's fuse_norm_relu), which in
// training also writes the mask (oneDNN's workspace, or ChannelsLastBN's) that its gradient
// reads.
template <bool kRelu>
class SpatialBNOp final : public Operator<CPUContext> {
 public:
  SpatialBNOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  void UpdateRunningStats(const Tensor& mean, const Tensor& var, int64_t count);

  const float epsilon_, momentum_;
  const bool is_test_;
  bool channels_last_ = false;                // ChannelsLastBN runs, not primitive_
  dnnl::memory::desc x_md_, c_md_, mask_md_;  // c_md_: the [C] statistics and parameters
  dnnl::batch_normalization_forward primitive_;
  Tensor mean_scratch_, var_scratch_;  // batch statistics when outputs 3, 4 are unnamed
};

// dX, dscale, dbias from X, scale, the saved batch statistics and dY (kRelu: and the mask,
// input 5, which zeroes dY where the fused ReLU did).
template <bool kRelu>
class SpatialBNGradientOp final : public Operator<CPUContext> {
 public:
  SpatialBNGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float epsilon_;
  bool channels_last_ = false;                // ChannelsLastBN runs, not primitive_
  dnnl::memory::desc x_md_, c_md_, mask_md_;  // c_md_: the [C] statistics and parameters
  dnnl::batch_normalization_backward primitive_;
  ReorderCache dy_to_x_layout_;
  Tensor dx_scratch_, dscale_scratch_, dbias_scratch_;  // for unnamed outputs
};

}  // namespace crossbow
