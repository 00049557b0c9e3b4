// Element-wise activations on oneDNN's eltwise primitives: Relu, Mish and Sigmoid.
#include "operators/eltwise_op.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

constexpr bool FromOutput(algorithm a) {
  return a == algorithm::eltwise_relu_use_dst_for_bwd ||
         a == algorithm::eltwise_logistic_use_dst_for_bwd;
}

// The gradient's schema: dX shaped like input 0.
std::vector<TensorShape> LikeInput0(const OperatorDef&, const std::vector<TensorShape>& in) {
  return {in[0]};
}

}  // namespace

template <algorithm kAlgorithm>
void EltwiseOp<kAlgorithm>::Run() {
  const Tensor& x = Input(0);
  const memory::desc md = DescOf(x);
  if (md != md_) {
    md_ = md;
    auto desc = dnnl::eltwise_forward::desc(prop_kind::forward_training, kAlgorithm, md, 0.f);
    primitive_ = dnnl::eltwise_forward({desc, Attributes(), context_->engine()});
  }
  Tensor* y = Output(0);
  y->ResizeLike(x);
  Execute(primitive_,
          {{DNNL_ARG_SRC, Wrap(x, md, context_)}, {DNNL_ARG_DST, Wrap(*y, md, context_)}},
          context_);
}

template <algorithm kAlgorithm>
void EltwiseGradientOp<kAlgorithm>::Run() {
  const Tensor& from = Input(0);
  EnforceInputShape(1, from.shape());
  const memory::desc md = DescOf(from);
  if (md != md_) {
    md_ = md;
    auto hint_desc = dnnl::eltwise_forward::desc(prop_kind::forward_training, kAlgorithm, md, 0.f);
    dnnl::eltwise_forward::primitive_desc hint(hint_desc, context_->engine());
    auto desc = dnnl::eltwise_backward::desc(kAlgorithm, md, md, 0.f);
    primitive_ = dnnl::eltwise_backward({desc, Attributes(), context_->engine(), hint});
  }
  const Tensor& dy = dy_in_layout_.As(Input(1), md, context_);
  Tensor* dx = Output(0);
  dx->ResizeLike(from);
  Execute(primitive_,
          {{FromOutput(kAlgorithm) ? DNNL_ARG_DST : DNNL_ARG_SRC, Wrap(from, md, context_)},
           {DNNL_ARG_DIFF_DST, Wrap(dy, md, context_)},
           {DNNL_ARG_DIFF_SRC, Wrap(*dx, md, context_)}},
          context_);
}

OPERATOR_SCHEMA(Relu)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalShape()
    .Doc("Rectified linear unit, Y = max(X, 0), element-wise.")
    .Input(0, "X", "any float tensor")
    .Output(0, "Y", "same shape as X");
REGISTER_CPU_OPERATOR(Relu, EltwiseOp<algorithm::eltwise_relu>);

// From the output Y, so that Relu may run in place.
OPERATOR_SCHEMA(ReluGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .ShapeInference(LikeInput0)
    .Doc("Gradient of Relu from its output: dX = dY where Y > 0, else 0.")
    .Input(0, "Y", "Relu's output")
    .Input(1, "dY", "gradient of Y")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(ReluGradient, EltwiseGradientOp<algorithm::eltwise_relu_use_dst_for_bwd>);

REGISTER_GRADIENT(Relu, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("ReluGradient", {g.O(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(ReluGradient);

OPERATOR_SCHEMA(Mish)
    .NumInputs(1)
    .NumOutputs(1)
    .IdenticalShape()
    .Doc("Mish (Misra 2019), Y = X tanh(softplus(X)), element-wise.")
    .Input(0, "X", "any float tensor")
    .Output(0, "Y", "same shape as X");
REGISTER_CPU_OPERATOR(Mish, EltwiseOp<algorithm::eltwise_mish>);

OPERATOR_SCHEMA(MishGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference(LikeInput0)
    .Doc(
        "Gradient of Mish from its input: dX = dY (tanh(sp) + X sigmoid(X) (1 - tanh(sp)^2)), "
        "sp = softplus(X).")
    .Input(0, "X", "Mish's input")
    .Input(1, "dY", "gradient of Y")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(MishGradient, EltwiseGradientOp<algorithm::eltwise_mish>);

REGISTER_GRADIENT(Mish, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("MishGradient", {g.I(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(MishGradient);

OPERATOR_SCHEMA(Sigmoid)
    .NumInputs(1)
    .NumOutputs(1)
    .AllowInplace({{0, 0}})
    .IdenticalShape()
    .Doc("Logistic sigmoid, Y = 1 / (1 + exp(-X)), element-wise.")
    .Input(0, "X", "any float tensor")
    .Output(0, "Y", "same shape as X");
REGISTER_CPU_OPERATOR(Sigmoid, EltwiseOp<algorithm::eltwise_logistic_use_dst_for_bwd>);

OPERATOR_SCHEMA(SigmoidGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .ShapeInference(LikeInput0)
    .Doc("Gradient of Sigmoid from its output: dX = dY Y (1 - Y).")
    .Input(0, "Y", "Sigmoid's output")
    .Input(1, "dY", "gradient of Y")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(SigmoidGradient,
                      EltwiseGradientOp<algorithm::eltwise_logistic_use_dst_for_bwd>);

REGISTER_GRADIENT(Sigmoid, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("SigmoidGradient", {g.O(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(SigmoidGradient);

}  // namespace crossbow
