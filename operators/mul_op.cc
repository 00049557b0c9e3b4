#include "operators/mul_op.h"

#include "operators/parallel_threshold.h"

namespace crossbow {

broadcast::Layout MulLayout(const OperatorDef& def, const Shape& a, const Shape& b) {
  const auto rank = static_cast<int>(a.size());
  bool fits = rank <= broadcast::kMaxRank && b.size() <= a.size();
  broadcast::Layout l;
  l.rank = rank;
  for (int d = 0; fits && d < rank; ++d) {
    const int from_end = rank - d;
    const int64_t bd = from_end <= static_cast<int>(b.size()) ? b[b.size() - from_end] : 1;
    fits = bd == a[d] || bd == 1;
    l.dims[d] = a[d];
    l.spread[d] = bd != a[d];
    l.a_numel *= a[d];
    l.b_numel *= bd;
  }
  CROSSBOW_ENFORCE_VALUE(
      fits, def.Label(), ": input 1 '", def.inputs[1], "' of shape ", ShapeString(b),
      " does not broadcast to input 0 '", def.inputs[0], "' of shape ", ShapeString(a),
      " (B aligns to A's last dimensions, each 1 or A's, rank at most ", broadcast::kMaxRank, ")");
  return l;
}

void MulOp::Run() {
  const broadcast::Layout l = MulLayout(def(), Input(0).shape(), Input(1).shape());
  const float* a = a_plain_.AsPlain(Input(0), context_).data<float>();
  const float* b = b_plain_.AsPlain(Input(1), context_).data<float>();
  Tensor* y = Output(0);
  y->Resize(Input(0).shape());
  float* out = y->mutable_data<float>();
#pragma omp parallel for schedule(static) if (l.a_numel >= kMinParallelElements)
  for (int64_t i = 0; i < l.a_numel; ++i) out[i] = a[i] * b[broadcast::BOffset(l, i)];
}

void MulGradientOp::Run() {
  const Shape& a_shape = Input(0).shape();
  const broadcast::Layout l = MulLayout(def(), a_shape, Input(1).shape());
  EnforceInputShape(2, a_shape);
  const float* dy = dy_plain_.AsPlain(Input(2), context_).data<float>();
  if (HasOutput(0)) {
    const float* b = b_plain_.AsPlain(Input(1), context_).data<float>();
    Tensor* da = Output(0);
    da->Resize(a_shape);
    float* out = da->mutable_data<float>();
#pragma omp parallel for schedule(static) if (l.a_numel >= kMinParallelElements)
    for (int64_t i = 0; i < l.a_numel; ++i) out[i] = dy[i] * b[broadcast::BOffset(l, i)];
  }
  if (HasOutput(1)) {
    const float* a = a_plain_.AsPlain(Input(0), context_).data<float>();
    Tensor* db = Output(1);
    db->Resize(Input(1).shape());
    float* out = db->mutable_data<float>();
    const int64_t shared = l.a_numel / l.b_numel;
#pragma omp parallel for schedule(static) if (l.a_numel >= kMinParallelElements)
    for (int64_t j = 0; j < l.b_numel; ++j) {
      double sum = 0;
      for (int64_t k = 0; k < shared; ++k) {
        const int64_t i = broadcast::AOffset(l, j, k);
        sum += static_cast<double>(dy[i]) * a[i];
      }
      out[j] = static_cast<float>(sum);
    }
  }
}

OPERATOR_SCHEMA(Mul)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      MulLayout(def, in[0].dims, in[1].dims);
      return std::vector<TensorShape>{in[0]};
    })
    .Doc(
        "Y = A * B element-wise, B broadcast to A (numpy's rule one way: B's shape aligns to "
        "A's last dimensions, each 1 or A's): SE's channel scaling, A [N, C, H, W] by "
        "B [N, C, 1, 1], or a learned scalar gain, B [1].")
    .Input(0, "A", "float tensor")
    .Input(1, "B", "float tensor that broadcasts to A")
    .Output(0, "Y", "A's shape");
REGISTER_CPU_OPERATOR(Mul, MulOp);

OPERATOR_SCHEMA(MulGradient)
    .NumInputs(3)
    .NumOutputs(2)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      MulLayout(def, in[0].dims, in[1].dims);
      return std::vector<TensorShape>{in[0], in[1]};
    })
    .Doc(
        "Gradient of Mul: dA = dY * B broadcast, dB = dY * A summed over B's broadcast "
        "dimensions.")
    .Input(0, "A", "Mul's A")
    .Input(1, "B", "Mul's B")
    .Input(2, "dY", "gradient of Y")
    .Output(0, "dA", "gradient of A (unnamed: not computed)")
    .Output(1, "dB", "gradient of B (unnamed: not computed)");
REGISTER_CPU_OPERATOR(MulGradient, MulGradientOp);

REGISTER_GRADIENT(Mul, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{
      g.Op("MulGradient", {g.I(0), g.I(1), g.GO(0)}, {g.GI(0), g.GI(1)})};
});
NO_GRADIENT(MulGradient);

}  // namespace crossbow
