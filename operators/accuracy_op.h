#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The `top_k` argument (default 1); a ValueError naming the operator when it is below 1.
int64_t TopK(const OperatorDef& def);

// The fraction of rows whose label is among the top_k scores, by IsTopKHit (core/top_k.h):
// fewer than top_k other classes score at least as high as the label (ties count against it),
// and a row holding a NaN is a miss.
class AccuracyOp final : public Operator<CPUContext> {
 public:
  AccuracyOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  int64_t top_k_;
  ReorderCache scores_plain_;
};

}  // namespace crossbow
