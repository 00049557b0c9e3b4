#pragma once

#include "crossbow/core/operator.h"
#include "operators/dnnl_utils.h"
#include "operators/reorder_cache.h"

namespace crossbow {

// Y = softmax(X) over each row of a [N, C] tensor (any layout in, plain out).
class SoftmaxOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache x_plain_;
};

// dX = Y * (dY - <dY, Y>) per row.
class SoftmaxGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache y_plain_, dy_plain_;
};

// prob = softmax(logits) per row; loss = mean over rows of -log prob[label].
class SoftmaxWithLossOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache logits_plain_;
  Tensor prob_scratch_;
};

// dlogits = (prob - onehot(label)) * dloss / N.
class SoftmaxWithLossGradientOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void Run() override;

 private:
  ReorderCache prob_plain_;
};

// Throw ValueErrors naming `def` and input i unless its shape is [N, C] with N, C > 0; the shape
// of input j; one float32.
void EnforceMatrix(const OperatorDef& def, int i, const Shape& shape);
void EnforceSameShape(const OperatorDef& def, int i, const Shape& shape, int j, const Shape& other);
void EnforceScalar(const OperatorDef& def, int i, const Shape& shape, DataType type);
// Throws a ValueError naming `def` unless `label` is int32 of shape [N] for scores [N, C].
void EnforceScoresAndLabels(const OperatorDef& def, const Shape& scores, const Shape& label,
                            DataType label_type);
// Throws a ValueError naming `def`, the row and the value for a label outside [0, C).
void EnforceLabelsInRange(const OperatorDef& def, const int32_t* label, int64_t n, int64_t c);

}  // namespace crossbow
