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

// The argument label_smoothing, e in [0, 1) (default 0), of SoftmaxWithLoss and its gradient:
// the target of a row is q = (1 - e) onehot(label) + e / C, as in PyTorch's
// CrossEntropyLoss(label_smoothing=e). Throws a ValueError naming `def` outside [0, 1).
float LabelSmoothing(const OperatorDef& def);

// prob = softmax(logits) per row; loss = mean over rows of -sum_c q[c] log prob[c], that is
// logsumexp(x) - (1 - e) x[label] - e mean_c x[c].
class SoftmaxWithLossOp final : public Operator<CPUContext> {
 public:
  SoftmaxWithLossOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float smoothing_;
  ReorderCache logits_plain_;
  Tensor prob_scratch_;
};

// dlogits = (prob - q) * dloss / N.
class SoftmaxWithLossGradientOp final : public Operator<CPUContext> {
 public:
  SoftmaxWithLossGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float smoothing_;
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
