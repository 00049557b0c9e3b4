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

// Mixed targets (Mixup, CutMix): two more inputs from `first` on (SoftmaxWithLoss: 2, its
// gradient: 3), label_b (int32 [N]) and lam (float32 [N]): row r's target is lam[r] of
// label[r]'s and 1 - lam[r] of label_b[r]'s. Returns whether `def` has them; a ValueError
// naming `def` where it has one of the two.
bool MixedTargets(const OperatorDef& def, int first);
// Throws ValueErrors naming `def` unless label_b is int32 [N] and lam float32 [N] for scores
// [N, C]; `first` is label_b's input index.
void EnforceMixInputs(const OperatorDef& def, int first, const Shape& scores,
                      const TensorShape& label_b, const TensorShape& lam);

// prob = softmax(logits) per row; loss = mean over rows of -sum_c q[c] log prob[c], that is
// logsumexp(x) - (1 - e) t - e mean_c x[c], with t = x[label], or lam x[label] + (1 - lam)
// x[label_b] for mixed targets.
class SoftmaxWithLossOp final : public Operator<CPUContext> {
 public:
  SoftmaxWithLossOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;

 private:
  const float smoothing_;
  const bool mixed_;
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
  const bool mixed_;
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
void EnforceLabelsInRange(const OperatorDef& def, const int32_t* label, int64_t n, int64_t c,
                          int input = 1);
// Throws a ValueError naming `def`, input `input`, the row and the value for a lam outside [0, 1].
void EnforceLamInRange(const OperatorDef& def, int input, const float* lam, int64_t n);

}  // namespace crossbow
