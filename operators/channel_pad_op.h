#pragma once

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// ChannelPad's `before` and `after` arguments (ValueError unless both are >= 0).
struct ChannelPadding {
  int64_t before, after;
};
ChannelPadding ChannelPaddingOf(const OperatorDef& def);
// Y's shape for X (ChannelPad) and dX's for dY (its gradient); ValueErrors name the operator.
Shape PaddedShape(const OperatorDef& def, const Shape& x);
Shape UnpaddedShape(const OperatorDef& def, const Shape& dy);

// Y = X with `before` zero channels in front and `after` behind: the parameter-free
// ("option A") shortcut of CIFAR ResNets. An nChw16c/nChw8c X padded by whole blocks is
// copied block by block and Y keeps its layout; otherwise Y is plain.
class ChannelPadOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache to_plain_;
  Tensor plain_x_;
};

// dX = the channels of dY that came from X. Blocked dY stays blocked when both the padding
// and X's channels are whole blocks; otherwise dX is plain.
class ChannelPadGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache to_plain_;
  Tensor plain_dy_;
};

}  // namespace crossbow
