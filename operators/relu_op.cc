#include "operators/relu_op.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::algorithm;
using dnnl::prop_kind;

void ReluOp::Run() {
  const Tensor& x = Input(0);
  memory::desc md = DescOf(x);
  if (md != md_) {
    md_ = md;
    auto desc =
        dnnl::eltwise_forward::desc(prop_kind::forward_training, algorithm::eltwise_relu, md, 0.f);
    primitive_ = dnnl::eltwise_forward({desc, Attributes(), context_->engine()});
  }
  Tensor* y = Output(0);
  y->ResizeLike(x);
  Execute(primitive_,
          {{DNNL_ARG_SRC, Wrap(x, md, context_)}, {DNNL_ARG_DST, Wrap(*y, md, context_)}},
          context_);
}

void ReluGradientOp::Run() {
  const Tensor& y = Input(0);
  EnforceInputShape(1, y.shape());
  memory::desc y_md = DescOf(y);
  if (y_md != y_md_) {
    y_md_ = y_md;
    auto hint_desc = dnnl::eltwise_forward::desc(
        prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, y_md, 0.f);
    dnnl::eltwise_forward::primitive_desc hint(hint_desc, context_->engine());
    auto desc =
        dnnl::eltwise_backward::desc(algorithm::eltwise_relu_use_dst_for_bwd, y_md, y_md, 0.f);
    primitive_ = dnnl::eltwise_backward({desc, Attributes(), context_->engine(), hint});
  }
  const Tensor& dy = to_y_layout_.As(Input(1), y_md, &dy_scratch_, context_);
  Tensor* dx = Output(0);
  dx->ResizeLike(y);
  Execute(primitive_,
          {{DNNL_ARG_DST, Wrap(y, y_md, context_)},
           {DNNL_ARG_DIFF_DST, Wrap(dy, y_md, context_)},
           {DNNL_ARG_DIFF_SRC, Wrap(*dx, y_md, context_)}},
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
REGISTER_CPU_OPERATOR(Relu, ReluOp);

OPERATOR_SCHEMA(ReluGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .AllowInplace({{1, 0}})
    .ShapeInference([](const OperatorDef&, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{in[1]};
    })
    .Doc("Gradient of Relu from its output: dX = dY where Y > 0, else 0.")
    .Input(0, "Y", "Relu's output")
    .Input(1, "dY", "gradient of Y")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(ReluGradient, ReluGradientOp);

REGISTER_GRADIENT(Relu, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("ReluGradient", {g.O(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(ReluGradient);

}  // namespace crossbow
