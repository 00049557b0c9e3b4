#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// The `top_k` argument (default 1); a ValueError naming the operator when it is below 1.
int64_t TopK(const OperatorDef& def);

// The fraction of rows whose label is among the top_k scores: a row counts as a hit when
// fewer than top_k classes score strictly higher than its label (ties favour the label).
class AccuracyOp final : public Operator<CPUContext> {
 public:
  AccuracyOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  int64_t top_k_;
  ReorderCache scores_plain_;
};

}  // namespace crossbow
