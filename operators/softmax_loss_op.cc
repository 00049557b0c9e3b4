#include "operators/softmax_loss_op.h"

#include <algorithm>
#include <cmath>

namespace crossbow {

using namespace dnnl_utils;

namespace {

// Writes softmax(x) into y and returns log(sum(exp(x))), computed
// from x - max(x) so that large logits neither overflow nor lose the small ones.
float SoftmaxRow(const float* x, int64_t c, float* y) {
  float max = x[0];
  for (int64_t j = 1; j < c; ++j) max = std::max(max, x[j]);
  float sum = 0.f;
  for (int64_t j = 0; j < c; ++j) {
    y[j] = std::exp(x[j] - max);
    sum += y[j];
  }
  const float inv = 1.f / sum;
  for (int64_t j = 0; j < c; ++j) y[j] *= inv;
  return max + std::log(sum);
}

// A CPU operator's mixed targets from input `first` on, checked; both null when it has none.
struct MixView {
  const int32_t* label_b = nullptr;
  const float* lam = nullptr;
};

}  // namespace

void EnforceMatrix(const OperatorDef& def, int i, const Shape& shape) {
  CROSSBOW_ENFORCE_VALUE(shape.size() == 2 && shape[0] > 0 && shape[1] > 0, def.Label(), ": input ",
                         i, " '", def.inputs[i], "' has shape ", ShapeString(shape),
                         ", expected [N, C] with N, C > 0");
}

void EnforceSameShape(const OperatorDef& def, int i, const Shape& shape, int j,
                      const Shape& other) {
  CROSSBOW_ENFORCE_VALUE(shape == other, def.Label(), ": input ", i, " '", def.inputs[i],
                         "' has shape ", ShapeString(shape), ", expected the shape of input ", j,
                         " '", def.inputs[j], "' ", ShapeString(other));
}

void EnforceScalar(const OperatorDef& def, int i, const Shape& shape, DataType type) {
  CROSSBOW_ENFORCE_VALUE(NumElements(shape) == 1 && type == DataType::kFloat32, def.Label(),
                         ": input ", i, " '", def.inputs[i], "' must be one float32, got ",
                         DataTypeName(type), ShapeString(shape));
}

void EnforceScoresAndLabels(const OperatorDef& def, const Shape& scores, const Shape& label,
                            DataType label_type) {
  EnforceMatrix(def, 0, scores);
  CROSSBOW_ENFORCE_VALUE(label.size() == 1 && label[0] == scores[0], def.Label(), ": input 1 '",
                         def.inputs[1], "' has shape ", ShapeString(label),
                         ", expected [N] for input 0 '", def.inputs[0], "' of shape ",
                         ShapeString(scores));
  CROSSBOW_ENFORCE_VALUE(label_type == DataType::kInt32, def.Label(), ": input 1 '", def.inputs[1],
                         "' must hold int32 class indices, got ", DataTypeName(label_type));
}

void EnforceLabelsInRange(const OperatorDef& def, const int32_t* label, int64_t n, int64_t c,
                          int input) {
  for (int64_t r = 0; r < n; ++r) {
    CROSSBOW_ENFORCE_VALUE(label[r] >= 0 && label[r] < c, def.Label(), ": input ", input, " '",
                           def.inputs[input], "' row ", r, " holds class ", label[r],
                           ", outside [0, ", c, ")");
  }
}

void EnforceLamInRange(const OperatorDef& def, int input, const float* lam, int64_t n) {
  for (int64_t r = 0; r < n; ++r) {
    CROSSBOW_ENFORCE_VALUE(lam[r] >= 0.f && lam[r] <= 1.f, def.Label(), ": input ", input, " '",
                           def.inputs[input], "' row ", r, " holds ", lam[r], ", outside [0, 1]");
  }
}

bool MixedTargets(const OperatorDef& def, int first) {
  const int extra = static_cast<int>(def.inputs.size()) - first;
  CROSSBOW_ENFORCE_VALUE(extra == 0 || extra == 2, def.Label(), ": mixed targets take two inputs ",
                         "after input ", first - 1, ", label_b and lam; got ", extra);
  return extra == 2;
}

void EnforceMixInputs(const OperatorDef& def, int first, const Shape& scores,
                      const TensorShape& label_b, const TensorShape& lam) {
  const Shape rows = {scores[0]};
  for (int i : {first, first + 1}) {
    const TensorShape& in = i == first ? label_b : lam;
    const DataType type = i == first ? DataType::kInt32 : DataType::kFloat32;
    CROSSBOW_ENFORCE_VALUE(in.dims == rows && in.dtype == type, def.Label(), ": input ", i, " '",
                           def.inputs[i], "' must be ", DataTypeName(type), ShapeString(rows),
                           " for input 0 '", def.inputs[0], "' of shape ", ShapeString(scores),
                           ", got ", DataTypeName(in.dtype), ShapeString(in.dims));
  }
}

namespace {

MixView Mix(const OperatorBase& op, bool mixed, int first, int64_t n, int64_t c) {
  if (!mixed) return {};
  const Tensor& label_b = op.Input(first);
  const Tensor& lam = op.Input(first + 1);
  EnforceMixInputs(op.def(), first, op.Input(0).shape(), {label_b.shape(), label_b.dtype()},
                   {lam.shape(), lam.dtype()});
  EnforceLabelsInRange(op.def(), label_b.data<int32_t>(), n, c, first);
  EnforceLamInRange(op.def(), first + 1, lam.data<float>(), n);
  return {label_b.data<int32_t>(), lam.data<float>()};
}

}  // namespace

float LabelSmoothing(const OperatorDef& def) {
  const float e = def.Arg<float>("label_smoothing", 0.f);
  CROSSBOW_ENFORCE_VALUE(e >= 0.f && e < 1.f, def.Label(),
                         ": label_smoothing must be in [0, 1), got ", e);
  return e;
}

void SoftmaxOp::Run() {
  EnforceMatrix(def(), 0, Input(0).shape());
  const Tensor& x = x_plain_.AsPlain(Input(0), context_);
  const int64_t n = x.dim(0), c = x.dim(1);
  Tensor* y = Output(0);
  y->Resize(x.shape());
  const float* in = x.data<float>();
  float* out = y->mutable_data<float>();
  for (int64_t r = 0; r < n; ++r) SoftmaxRow(in + r * c, c, out + r * c);
}

void SoftmaxGradientOp::Run() {
  EnforceMatrix(def(), 0, Input(0).shape());
  EnforceSameShape(def(), 1, Input(1).shape(), 0, Input(0).shape());
  const Tensor& y = y_plain_.AsPlain(Input(0), context_);
  const Tensor& dy = dy_plain_.AsPlain(Input(1), context_);
  const int64_t n = y.dim(0), c = y.dim(1);
  Tensor* dx = Output(0);
  dx->Resize(y.shape());
  const float* py = y.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = dx->mutable_data<float>();
  for (int64_t r = 0; r < n; ++r) {
    const int64_t row = r * c;
    float dot = 0.f;
    for (int64_t j = 0; j < c; ++j) dot += pdy[row + j] * py[row + j];
    for (int64_t j = 0; j < c; ++j) pdx[row + j] = py[row + j] * (pdy[row + j] - dot);
  }
}

SoftmaxWithLossOp::SoftmaxWithLossOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), smoothing_(LabelSmoothing(def)), mixed_(MixedTargets(def, 2)) {}

void SoftmaxWithLossOp::Run() {
  const Tensor& label = Input(1);
  EnforceScoresAndLabels(def(), Input(0).shape(), label.shape(), label.dtype());
  const Tensor& logits = logits_plain_.AsPlain(Input(0), context_);
  const int64_t n = logits.dim(0), c = logits.dim(1);
  const int32_t* labels = label.data<int32_t>();
  EnforceLabelsInRange(def(), labels, n, c);
  const MixView mix = Mix(*this, mixed_, 2, n, c);
  // Callers that only want the loss still need the probabilities as working memory.
  Tensor* prob = HasOutput(0) ? Output(0) : &prob_scratch_;
  prob->Resize(logits.shape());
  const float* x = logits.data<float>();
  float* p = prob->mutable_data<float>();
  double total = 0.0;
  for (int64_t r = 0; r < n; ++r) {
    const float* row = x + r * c;
    // The target's logit: x[label], or the lam-weighted pair of a mixed row.
    const float target =
        mix.lam == nullptr ? row[labels[r]]
                           : mix.lam[r] * row[labels[r]] + (1.f - mix.lam[r]) * row[mix.label_b[r]];
    total += SoftmaxRow(row, c, p + r * c) - target;
    if (smoothing_ > 0.f) {  // + e (target - mean_c x[c])
      double sum = 0.0;
      for (int64_t j = 0; j < c; ++j) sum += row[j];
      total += smoothing_ * (target - sum / static_cast<double>(c));
    }
  }
  if (HasOutput(1)) {
    Output(1)->Resize({});
    Output(1)->mutable_data<float>()[0] = static_cast<float>(total / static_cast<double>(n));
  }
}

SoftmaxWithLossGradientOp::SoftmaxWithLossGradientOp(const OperatorDef& def, Workspace* ws,
                                                     CPUContext* context)
    : Operator(def, ws, context), smoothing_(LabelSmoothing(def)), mixed_(MixedTargets(def, 3)) {}

void SoftmaxWithLossGradientOp::Run() {
  const Tensor& label = Input(1);
  EnforceScoresAndLabels(def(), Input(0).shape(), label.shape(), label.dtype());
  EnforceScalar(def(), 2, Input(2).shape(), Input(2).dtype());
  const Tensor& prob = prob_plain_.AsPlain(Input(0), context_);
  const int64_t n = prob.dim(0), c = prob.dim(1);
  const int32_t* labels = label.data<int32_t>();
  EnforceLabelsInRange(def(), labels, n, c);
  const MixView mix = Mix(*this, mixed_, 3, n, c);
  const float scale = Input(2).data<float>()[0] / static_cast<float>(n);
  Tensor* dx = Output(0);
  dx->Resize(prob.shape());
  const float* p = prob.data<float>();
  float* d = dx->mutable_data<float>();
  const float off = smoothing_ * scale / static_cast<float>(c);  // e / C of q, scaled
  const float on = (1.f - smoothing_) * scale + off;             // q at the label, scaled
  for (int64_t i = 0; i < n * c; ++i) d[i] = p[i] * scale - off;
  if (mix.lam == nullptr) {
    for (int64_t r = 0; r < n; ++r) d[r * c + labels[r]] += off - on;
    return;
  }
  for (int64_t r = 0; r < n; ++r) {
    d[r * c + labels[r]] += mix.lam[r] * (off - on);
    d[r * c + mix.label_b[r]] += (1.f - mix.lam[r]) * (off - on);
  }
}

OPERATOR_SCHEMA(Softmax)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceMatrix(def, 0, in[0].dims);
      return std::vector<TensorShape>{{in[0].dims}};
    })
    .Doc("Softmax over each row: Y[n, c] = exp(X[n, c]) / sum_k exp(X[n, k]). Y is plain.")
    .Input(0, "X", "scores [N, C], any layout")
    .Output(0, "Y", "probabilities [N, C], plain");
REGISTER_CPU_OPERATOR(Softmax, SoftmaxOp);

OPERATOR_SCHEMA(SoftmaxGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceMatrix(def, 0, in[0].dims);
      EnforceSameShape(def, 1, in[1].dims, 0, in[0].dims);
      return std::vector<TensorShape>{{in[0].dims}};
    })
    .Doc("Gradient of Softmax from its output: dX = Y * (dY - sum_c dY * Y), per row.")
    .Input(0, "Y", "Softmax's output [N, C]")
    .Input(1, "dY", "gradient of Y [N, C], any layout")
    .Output(0, "dX", "gradient of X [N, C], plain");
REGISTER_CPU_OPERATOR(SoftmaxGradient, SoftmaxGradientOp);

OPERATOR_SCHEMA(SoftmaxWithLoss)
    .NumInputs(2, 4)
    .NumOutputs(2)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceScoresAndLabels(def, in[0].dims, in[1].dims, in[1].dtype);
      if (MixedTargets(def, 2)) EnforceMixInputs(def, 2, in[0].dims, in[2], in[3]);
      return std::vector<TensorShape>{{in[0].dims}, {Shape{}}};
    })
    .Doc(
        "Softmax of the logits and the mean cross-entropy against integer labels, smoothed: "
        "loss = mean_n -sum_c q[n, c] log(prob[n, c]), q = (1 - label_smoothing) "
        "onehot(label[n]) + label_smoothing / C. A label outside [0, C) is an error. With "
        "label_b and lam (Mixup, CutMix), row n's target is lam[n] of label[n]'s q and "
        "1 - lam[n] of label_b[n]'s: loss = mean_n lam CE(label) + (1 - lam) CE(label_b).")
    .Input(0, "logits", "scores [N, C], any layout")
    .Input(1, "label", "int32 [N], class indices in [0, C)")
    .Input(2, "label_b", "optional, with lam: int32 [N], the class mixed in")
    .Input(3, "lam", "optional, with label_b: float32 [N] in [0, 1], label's share of the target")
    .Output(0, "prob", "softmax of the logits [N, C], plain (may be left unnamed)")
    .Output(1, "loss", "scalar mean cross-entropy")
    .Arg("label_smoothing",
         "float in [0, 1), default 0: the share of the target spread evenly "
         "over the classes");
REGISTER_CPU_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossOp);

OPERATOR_SCHEMA(SoftmaxWithLossGradient)
    .NumInputs(3, 5)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceScoresAndLabels(def, in[0].dims, in[1].dims, in[1].dtype);
      EnforceScalar(def, 2, in[2].dims, in[2].dtype);
      if (MixedTargets(def, 3)) EnforceMixInputs(def, 3, in[0].dims, in[3], in[4]);
      return std::vector<TensorShape>{{in[0].dims}};
    })
    .Doc("Gradient of SoftmaxWithLoss: dlogits = (prob - q) * dloss / N, q its target.")
    .Input(0, "prob", "SoftmaxWithLoss's output 0 [N, C]")
    .Input(1, "label", "int32 [N]")
    .Input(2, "dloss", "gradient of the loss, one float")
    .Input(3, "label_b", "optional, as in SoftmaxWithLoss")
    .Input(4, "lam", "optional, as in SoftmaxWithLoss")
    .Output(0, "dlogits", "gradient of the logits [N, C], plain")
    .Arg("label_smoothing", "as in SoftmaxWithLoss");
REGISTER_CPU_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientOp);

namespace {

// prob, label, dloss, and the mixed targets where the loss has them.
std::vector<std::string> SoftmaxWithLossGradientInputs(const GradientHelper& g) {
  std::vector<std::string> inputs = {g.O(0), g.I(1), g.GO(1)};
  for (int i = 2; i < static_cast<int>(g.def().inputs.size()); ++i) inputs.push_back(g.I(i));
  return inputs;
}

}  // namespace

REGISTER_GRADIENT(Softmax, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("SoftmaxGradient", {g.O(0), g.GO(0)}, {g.GI(0)})};
});
REGISTER_GRADIENT(SoftmaxWithLoss, [](const GradientHelper& g) {
  CROSSBOW_ENFORCE_VALUE(g.GO(0).empty(), g.def().Label(), ": no gradient flows back through",
                         " output 0 'prob'; use Softmax where probabilities feed the loss");
  CROSSBOW_ENFORCE_VALUE(!g.O(0).empty(), g.def().Label(),
                         ": output 0 'prob' must be named, its gradient needs it");
  if (g.GI(0).empty()) return std::vector<OperatorDef>{};
  return std::vector<OperatorDef>{
      g.Op("SoftmaxWithLossGradient", SoftmaxWithLossGradientInputs(g), {g.GI(0)})};
});
NO_GRADIENT(SoftmaxGradient);
NO_GRADIENT(SoftmaxWithLossGradient);

}  // namespace crossbow
