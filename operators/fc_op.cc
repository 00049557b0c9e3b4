#include "operators/fc_op.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::prop_kind;

Shape FCOutputShape(const OperatorDef& def, const Shape& x, const Shape& w, const Shape* b) {
  CROSSBOW_ENFORCE_VALUE(x.size() >= 2, def.Label(), ": input 0 '", def.inputs[0],
                         "' must be [N, ...] with at least 2 dimensions, got ", ShapeString(x));
  const int64_t k = NumElements(Shape(x.begin() + 1, x.end()));
  CROSSBOW_ENFORCE_VALUE(w.size() == 2 && w[1] == k && w[0] > 0, def.Label(), ": input 1 '",
                         def.inputs[1], "' has shape ", ShapeString(w), ", expected [M, ", k,
                         "] for input 0 '", def.inputs[0], "' of shape ", ShapeString(x));
  if (b != nullptr) {
    CROSSBOW_ENFORCE_VALUE(*b == Shape{w[0]}, def.Label(), ": input 2 '", def.inputs[2],
                           "' has shape ", ShapeString(*b), ", expected [", w[0], "] for input 1 '",
                           def.inputs[1], "' of shape ", ShapeString(w));
  }
  return {x[0], w[0]};
}

namespace {

// What the inner product sees of X and W: a plain X as [N, K] with W plain [M, K]; a blocked X
// (nChw16c after global pooling, say) as it is, with W viewed as [M, C, H, W] and laid out as
// the primitive picks, so that X is never reordered. In precision bf16 the primitives read X
// and W as bfloat16 copies laid out as they pick (X as it is where it already is), and dY as a
// plain bfloat16 copy; they write Y and dW in fp32 and dX in X's own layout and type.
struct FCLayout {
  FCLayout(const Tensor& t, const Shape& w, const Shape& y, Precision precision) {
    if (t.is_plain()) {
      x = PlainDesc({t.dim(0), w[1]}, DescOf(t).data_type());
      w_plain = w_out = PlainDesc(w);
    } else {
      Shape w_dims = t.shape();
      w_dims[0] = w[0];
      x = t.layout();
      w_plain = PlainDesc(w_dims);
      w_out = AnyDesc(w_dims);
    }
    dy = PlainDesc(y);
    x_in = x;
    w_in = w_out;
    dy_in = dy;
    if (precision == Precision::kBF16) {
      const auto bf16 = memory::data_type::bf16;
      x_in = memory::desc(x.dims(), bf16, memory::format_tag::any);
      w_in = memory::desc(w_plain.dims(), bf16, memory::format_tag::any);
      dy_in = memory::desc(dy.dims(), bf16, memory::format_tag::ab);
    }
  }
  memory::desc x, w_plain, dy;            // as stored
  memory::desc x_in, w_in, dy_in, w_out;  // as the primitives read them; dW as they write it
};

dnnl::inner_product_forward::primitive_desc ForwardDesc(const FCLayout& layout, const Shape& y,
                                                        bool bias, const dnnl::engine& engine) {
  const memory::desc b = bias ? PlainDesc({y[1]}) : memory::desc();
  auto desc = dnnl::inner_product_forward::desc(prop_kind::forward_training, layout.x_in,
                                                layout.w_in, b, PlainDesc(y));
  return {desc, Attributes(), engine};
}

}  // namespace

void FCOp::Build(const memory::desc& x_md) {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Tensor* b = Bias();
  y_shape_ = FCOutputShape(def(), x.shape(), w.shape(), b ? &b->shape() : nullptr);
  FCLayout layout(x, w.shape(), y_shape_, context_->precision());
  auto pd = ForwardDesc(layout, y_shape_, b != nullptr, context_->engine());
  forward_.Build(dnnl::inner_product_forward(pd), x_md, layout.x, pd.src_desc(), layout.w_plain,
                 pd.weights_desc(), w, b);
}

void FCOp::Run() {
  const memory::desc x_md = DescOf(Input(0));
  if (forward_.Stale(x_md, Input(1), Bias())) Build(x_md);
  Tensor* y = Output(0);
  y->Resize(y_shape_);
  forward_.Run(Input(0), Input(1), Bias(), Wrap(*y, context_), context_);
}

FCGradientOp::FCGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      want_weights_(HasOutput(0) || HasOutput(1)),
      want_bias_(HasOutput(1)),
      want_data_(HasOutput(2)) {}

void FCGradientOp::Build(const memory::desc& x_md, const memory::desc& dy_md) {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Shape y_shape = FCOutputShape(def(), x.shape(), w.shape(), nullptr);
  EnforceInputShape(2, y_shape);
  FCLayout layout(x, w.shape(), y_shape, context_->precision());
  auto hint = ForwardDesc(layout, y_shape, want_bias_, context_->engine());
  if (want_weights_) {
    const memory::desc db = want_bias_ ? PlainDesc({y_shape[1]}) : memory::desc();
    auto desc =
        dnnl::inner_product_backward_weights::desc(layout.x_in, layout.w_out, db, layout.dy_in);
    dnnl::inner_product_backward_weights::primitive_desc pd(desc, Attributes(), context_->engine(),
                                                            hint);
    weights_.Build(dnnl::inner_product_backward_weights(pd), pd.diff_weights_desc(), layout.w_plain,
                   w.shape());
    src_in_md_ = pd.src_desc();
  }
  if (want_data_) {
    auto desc = dnnl::inner_product_backward_data::desc(layout.x, layout.w_in, layout.dy_in);
    dnnl::inner_product_backward_data::primitive_desc pd(desc, Attributes(), context_->engine(),
                                                         hint);
    data_primitive_ = dnnl::inner_product_backward_data(pd);
    bd_w_md_ = pd.weights_desc();
  }
  dy_in_md_ = layout.dy_in;
  w_plain_md_ = layout.w_plain;
  src_md_ = layout.x;
  x_md_ = x_md;
  dy_md_ = dy_md;
  w_shape_ = w.shape();
}

void FCGradientOp::Run() {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Tensor& dy = Input(2);
  memory::desc x_md = DescOf(x), dy_md = DescOf(dy);
  if (x_md != x_md_ || dy_md != dy_md_ || w.shape() != w_shape_) Build(x_md, dy_md);
  memory dy_in = dy_to_in_.Convert(dy, dy_md_, dy_in_md_, context_);
  if (want_weights_) {
    weights_.Run(x_to_in_.Convert(x, src_md_, src_in_md_, context_), dy_in,
                 HasOutput(0) ? Output(0) : nullptr, want_bias_ ? Output(1) : nullptr, context_);
  }
  if (want_data_) BackwardData(w, dy_in);
}

void FCGradientOp::BackwardData(const Tensor& w, const memory& dy) {
  Tensor* dx = Output(2);
  dx->ResizeLike(Input(0));
  Execute(data_primitive_,
          {{DNNL_ARG_DIFF_DST, dy},
           {DNNL_ARG_WEIGHTS, w_for_data_.Convert(w, w_plain_md_, bd_w_md_, context_)},
           {DNNL_ARG_DIFF_SRC, Wrap(*dx, src_md_, context_)}},
          context_);
}

namespace {

std::vector<TensorShape> InferFC(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const Shape* b = in.size() == 3 ? &in[2].dims : nullptr;
  return {{FCOutputShape(def, in[0].dims, in[1].dims, b)}};
}

std::vector<TensorShape> InferFCGradient(const OperatorDef& def,
                                         const std::vector<TensorShape>& in) {
  const Shape y = FCOutputShape(def, in[0].dims, in[1].dims, nullptr);
  CROSSBOW_ENFORCE_VALUE(in[2].dims == y, def.Label(), ": input 2 '", def.inputs[2], "' has shape ",
                         ShapeString(in[2].dims), ", expected ", ShapeString(y));
  return {in[1], {{in[1].dims[0]}}, in[0]};
}

}  // namespace

OPERATOR_SCHEMA(FC)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .ShapeInference(InferFC)
    .Doc("Fully connected layer: Y = X W^T + b, with X flattened to [N, K].")
    .Input(0, "X", "[N, ...] with K elements per example, any layout")
    .Input(1, "W", "[M, K], plain")
    .Input(2, "b", "optional bias [M], plain")
    .Output(0, "Y", "[N, M], plain");
REGISTER_CPU_OPERATOR(FC, FCOp);

OPERATOR_SCHEMA(FCGradient)
    .NumInputs(3)
    .NumOutputs(3)
    .ShapeInference(InferFCGradient)
    .Doc(
        "Gradients of FC with respect to its weights, bias and input. Unnamed outputs are not "
        "computed.")
    .Input(0, "X", "FC's input")
    .Input(1, "W", "FC's weights")
    .Input(2, "dY", "gradient of Y [N, M]")
    .Output(0, "dW", "gradient of W [M, K], plain")
    .Output(1, "db", "gradient of b [M], plain; unnamed when FC has no bias")
    .Output(2, "dX", "gradient of X: X's shape and layout; may be unnamed");
REGISTER_CPU_OPERATOR(FCGradient, FCGradientOp);

REGISTER_GRADIENT(FC, [](const GradientHelper& g) {
  const bool bias = g.def().inputs.size() == 3;
  return std::vector<OperatorDef>{
      g.Op("FCGradient", {g.I(0), g.I(1), g.GO(0)}, {g.GI(1), bias ? g.GI(2) : "", g.GI(0)})};
});
NO_GRADIENT(FCGradient);

}  // namespace crossbow
