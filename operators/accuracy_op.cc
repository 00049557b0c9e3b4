#include "operators/accuracy_op.h"

#include "crossbow/core/top_k.h"
#include "operators/softmax_loss_op.h"

namespace crossbow {

using namespace dnnl_utils;

int64_t TopK(const OperatorDef& def) {
  const int64_t k = def.Arg<int64_t>("top_k", 1);
  CROSSBOW_ENFORCE_VALUE(k >= 1, def.Label(), ": argument 'top_k' must be at least 1, got ", k);
  return k;
}

AccuracyOp::AccuracyOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), top_k_(TopK(def)) {}

void AccuracyOp::Run() {
  const Tensor& label = Input(1);
  EnforceScoresAndLabels(def(), Input(0).shape(), label.shape(), label.dtype());
  const Tensor& scores = scores_plain_.AsPlain(Input(0), context_);
  const int64_t n = scores.dim(0), c = scores.dim(1);
  const int32_t* labels = label.data<int32_t>();
  EnforceLabelsInRange(def(), labels, n, c);
  const float* s = scores.data<float>();
  int64_t hits = 0;
  for (int64_t r = 0; r < n; ++r) {
    hits += static_cast<int64_t>(IsTopKHit(s + r * c, c, labels[r], top_k_));
  }
  Tensor* accuracy = Output(0);
  accuracy->Resize({});
  accuracy->mutable_data<float>()[0] = static_cast<float>(hits) / static_cast<float>(n);
}

OPERATOR_SCHEMA(Accuracy)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      TopK(def);
      EnforceScoresAndLabels(def, in[0].dims, in[1].dims, in[1].dtype);
      return std::vector<TensorShape>{{Shape{}}};
    })
    .Doc(
        "Top-k accuracy: the fraction of rows whose label has fewer than top_k other classes "
        "scoring at least as high (ties count against the label); a row with a NaN score is "
        "a miss.")
    .Input(0, "scores", "probabilities or logits [N, C], any layout")
    .Input(1, "label", "int32 [N], class indices in [0, C)")
    .Output(0, "accuracy", "scalar in [0, 1]")
    .Arg("top_k", "int, default 1: how many of the best classes count as a hit");
REGISTER_CPU_OPERATOR(Accuracy, AccuracyOp);
NO_GRADIENT(Accuracy);

}  // namespace crossbow
