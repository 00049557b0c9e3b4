#include "operators/dropout_op.h"

#include <cstring>

namespace crossbow {

using namespace dnnl_utils;

float CheckedRatio(const OperatorDef& def) {
  const float ratio = def.Arg<float>("ratio", 0.5f);
  CROSSBOW_ENFORCE_VALUE(ratio >= 0.f && ratio < 1.f, def.Label(),
                         ": ratio must be in [0, 1), got ", ratio);
  return ratio;
}

namespace {

void CopyInto(const Tensor& src, Tensor* dst) {
  if (dst == &src) return;
  dst->ResizeLike(src);
  std::memcpy(dst->raw_data(), src.raw_data(), src.nbytes());
}

// Floats in the tensor's bytes, block padding included: element-wise ops run over all of them.
size_t StoredFloats(const Tensor& t) { return t.nbytes() / sizeof(float); }

}  // namespace

DropoutOp::DropoutOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      ratio_(CheckedRatio(def)),
      is_test_(Arg<bool>("is_test", false)) {}

void DropoutOp::Run() {
  const Tensor& x =
      to_float_.As(Input(0), WithType(DescOf(Input(0)), memory::data_type::f32), context_);
  Tensor* y = Output(0);
  if (is_test_) {
    CopyInto(x, y);
    return;
  }
  Tensor* mask = HasOutput(1) ? Output(1) : nullptr;
  y->ResizeLike(x);
  if (mask) mask->ResizeLike(x);
  const float* in = x.data<float>();
  float* out = y->mutable_data<float>();
  float* keep_out = mask ? mask->mutable_data<float>() : nullptr;
  const float scale = 1.f / (1.f - ratio_);
  // A unit is kept when a uniform 32-bit draw reaches ratio * 2^32; one 64-bit draw serves two.
  const auto threshold = static_cast<uint32_t>(static_cast<double>(ratio_) * 4294967296.0);
  std::mt19937_64& rng = context_->rng();
  const size_t n = StoredFloats(x);
  for (size_t i = 0; i < n; i += 2) {
    const uint64_t bits = rng();
    for (size_t k = 0; k < 2 && i + k < n; ++k) {
      const bool keep = static_cast<uint32_t>(bits >> (32 * k)) >= threshold;
      out[i + k] = keep ? in[i + k] * scale : 0.f;
      if (keep_out) keep_out[i + k] = keep ? 1.f : 0.f;
    }
  }
}

DropoutGradientOp::DropoutGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), ratio_(CheckedRatio(def)), is_test_(Arg<bool>("is_test", false)) {
  CROSSBOW_ENFORCE_VALUE(is_test_ || InputSize() == 2, def.Label(),
                         ": training needs the mask as input 1");
}

void DropoutGradientOp::Run() {
  const Tensor& dy_in = Input(0);
  Tensor* dx = Output(0);
  if (is_test_) {
    CopyInto(dy_in, dx);
    return;
  }
  const Tensor& mask = Input(1);
  EnforceInputShape(0, mask.shape());
  const Tensor* dy = &dy_to_mask_layout_.As(dy_in, DescOf(mask), context_);
  dx->ResizeLike(mask);
  const float* grad = dy->data<float>();
  const float* keep = mask.data<float>();
  float* out = dx->mutable_data<float>();
  const float scale = 1.f / (1.f - ratio_);
  const size_t n = StoredFloats(mask);
  for (size_t i = 0; i < n; ++i) out[i] = grad[i] * keep[i] * scale;
}

OPERATOR_SCHEMA(Dropout)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .AllowInplace({{0, 0}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      CheckedRatio(def);
      return std::vector<TensorShape>(def.outputs.size(), in[0]);
    })
    .Doc(
        "Inverted dropout: in training each unit is zeroed with probability ratio and the kept "
        "ones are scaled by 1 / (1 - ratio); in test mode Y = X.")
    .Input(0, "X", "any float tensor, any layout")
    .Output(0, "Y", "X's shape and layout")
    .Output(1, "mask", "1 where a unit was kept, 0 where dropped, in X's layout (training)")
    .Arg("ratio", "float in [0, 1), default 0.5: the probability of dropping a unit")
    .Arg("is_test", "int, default 0: pass X through unchanged");
REGISTER_CPU_OPERATOR(Dropout, DropoutOp);

OPERATOR_SCHEMA(DropoutGradient)
    .NumInputs(1, 2)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      CheckedRatio(def);
      CROSSBOW_ENFORCE_VALUE(in.size() < 2 || in[0].dims == in[1].dims, def.Label(), ": input 0 '",
                             def.inputs[0], "' has shape ", ShapeString(in[0].dims), ", expected ",
                             ShapeString(in[1].dims), " (the mask's)");
      return std::vector<TensorShape>{in[0]};
    })
    .Doc("Gradient of Dropout: dX = dY * mask / (1 - ratio); dX = dY in test mode.")
    .Input(0, "dY", "gradient of Y, any layout")
    .Input(1, "mask", "Dropout's output 1 (not needed in test mode)")
    .Output(0, "dX", "gradient of X, in the mask's layout")
    .Arg("ratio", "float, as in the forward operator")
    .Arg("is_test", "int, as in the forward operator");
REGISTER_CPU_OPERATOR(DropoutGradient, DropoutGradientOp);

REGISTER_GRADIENT(Dropout, [](const GradientHelper& g) {
  const OperatorDef& def = g.def();
  if (def.Arg<bool>("is_test", false)) {
    return std::vector<OperatorDef>{g.Op("DropoutGradient", {g.GO(0)}, {g.GI(0)})};
  }
  CROSSBOW_ENFORCE_VALUE(def.outputs.size() > 1 && !g.O(1).empty(), def.Label(),
                         ": its gradient needs the mask; name Dropout's second output");
  return std::vector<OperatorDef>{g.Op("DropoutGradient", {g.GO(0), g.O(1)}, {g.GI(0)})};
});
NO_GRADIENT(DropoutGradient);

}  // namespace crossbow
