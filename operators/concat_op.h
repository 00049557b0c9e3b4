#pragma once

#include <vector>

#include "crossbow/core/operator.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The concatenation axis in [0, ndim), from the `axis` argument (default 1, negative counts
// from the end).
int ConcatAxis(const OperatorDef& def, int ndim);
// Shape of the concatenation of `parts` (input i of `def` is parts[i + first]); throws a
// ValueError naming the operator and the input that does not fit.
Shape ConcatShape(const OperatorDef& def, const std::vector<const Shape*>& parts, int first);

// Y = the Xs joined along `axis`, on oneDNN's concat primitive: inputs keep their layouts and
// Y takes the layout oneDNN picks for them (blocked inputs give a blocked Y).
class ConcatOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  std::vector<dnnl::memory::desc> src_mds_;
  dnnl::memory::desc dst_md_;
  Shape y_shape_;
  dnnl::concat primitive_;
};

// dXi = the slice of dY that Xi filled, in Xi's layout. The slice is read in place from dY
// where its layout allows (block boundaries), else from a plain copy of dY.
class ConcatGradientOp final : public Operator<CPUContext> {
 public:
  ConcatGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  ReorderCache to_plain_;
  Tensor plain_dy_;
  std::vector<ReorderCache> slices_;
};

}  // namespace crossbow
