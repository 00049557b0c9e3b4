#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

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
