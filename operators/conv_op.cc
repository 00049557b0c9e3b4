#include "operators/conv_op.h"

#include "crossbow/core/precision.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::algorithm;
using dnnl::prop_kind;

ConvParams::ConvParams(const OperatorDef& def)
    : kernel(def.RequiredArg<int64_t>("kernel")),
      stride(def.Arg<int64_t>("stride", 1)),
      pad(def.Arg<int64_t>("pad", 0)),
      dilation(def.Arg<int64_t>("dilation", 1)),
      group(def.Arg<int64_t>("group", 1)) {
  CROSSBOW_ENFORCE_VALUE(kernel >= 1 && stride >= 1 && pad >= 0 && dilation >= 1 && group >= 1,
                         def.Label(), ": needs kernel, stride, dilation, group >= 1 and pad >= 0; ",
                         "got kernel=", kernel, " stride=", stride, " pad=", pad,
                         " dilation=", dilation, " group=", group);
}

Shape ConvOutputShape(const OperatorDef& def, const ConvParams& p, const Shape& x, const Shape& w,
                      const Shape* b) {
  CROSSBOW_ENFORCE_VALUE(x.size() == 4, def.Label(), ": input 0 '", def.inputs[0],
                         "' must be 4-D [N, C, H, W], got ", ShapeString(x));
  const int64_t c = x[1], m = w.empty() ? 0 : w[0];
  const bool w_fits = w.size() == 4 && c % p.group == 0 && m % p.group == 0 && m > 0 &&
                      w[1] * p.group == c && w[2] == p.kernel && w[3] == p.kernel;
  CROSSBOW_ENFORCE_VALUE(
      w_fits, def.Label(), ": input 1 '", def.inputs[1], "' has shape ", ShapeString(w),
      ", expected [M, C/group, kernel, kernel] with M a multiple of group, for input 0 '",
      def.inputs[0], "' of shape ", ShapeString(x), ", group=", p.group, ", kernel=", p.kernel);
  if (b != nullptr) {
    CROSSBOW_ENFORCE_VALUE(*b == Shape{m}, def.Label(), ": input 2 '", def.inputs[2],
                           "' has shape ", ShapeString(*b), ", expected [", m, "] for input 1 '",
                           def.inputs[1], "' of shape ", ShapeString(w));
  }
  const int64_t span = p.dilation * (p.kernel - 1) + 1;
  auto out = [&](int64_t in) { return (in + 2 * p.pad - span) / p.stride + 1; };
  CROSSBOW_ENFORCE_VALUE(x[2] + 2 * p.pad >= span && x[3] + 2 * p.pad >= span, def.Label(),
                         ": kernel ", p.kernel, " (dilation ", p.dilation, ", ", span,
                         " wide) with pad ", p.pad, " does not fit input 0 '", def.inputs[0],
                         "' of shape ", ShapeString(x));
  return {x[0], m, out(x[2]), out(x[3])};
}

bool PrefersWinograd(const ConvParams& p, const Shape& x, const Shape& w, const Shape& y,
                     Precision precision, ConvPass pass) {
  const int64_t tiles = y[0] * ((y[2] + 3) / 4) * ((y[3] + 3) / 4);
  const int64_t channels = pass == ConvPass::kBackwardWeights ? 16 : 32;
  return precision == Precision::kFP32 && p.kernel == 3 && p.stride == 1 && p.dilation == 1 &&
         p.group == 1 && x[1] >= channels && w[0] >= channels && tiles >= 32;
}

bool PrefersMatmul(const ConvParams& p, const Shape& y, bool bias, Precision precision,
                   ConvPass pass, bool amx) {
  if (p.dilation != 1 || p.group != 1 || bias || precision != Precision::kBF16 || !amx)
    return false;
  const bool pointwise = p.kernel == 1 && p.pad == 0;
  const int64_t plane = y[2] * y[3];
  const bool small = plane <= 16, strided = p.stride > 1 && plane <= 64;
  switch (pass) {
    case ConvPass::kForward:
      return !pointwise && small;
    case ConvPass::kBackwardData:
      return pointwise || small || strided;
    case ConvPass::kBackwardWeights:
      return pointwise || strided;
  }
  return false;
}

bool PrefersAmxWeightGradient(const ConvParams& p, const Shape& x, const Shape& w, bool want_bias,
                              Precision precision) {
  constexpr int64_t kMaxPackBytes = int64_t{4} << 20;
  return p.kernel == 3 && p.stride == 1 && p.pad == 1 && p.dilation == 1 && p.group == 1 &&
         !want_bias && x[1] % 16 == 0 && w[0] % 16 == 0 && precision == Precision::kBF16 &&
         AmxConvWeightGradient::PackBytes(x, w) <= kMaxPackBytes && AmxTilesGranted();
}

namespace {

// The descriptors and geometry that forward and backward primitives of one convolution share.
// Activations (X, Y, dX, dY) are read and written in the precision's type, bf16 or f32; W is
// read in that type and dW written in f32 (the master weights' type).
struct ConvDescs {
  ConvDescs(const ConvParams& p, const Shape& x, const Shape& w, const Shape& y, bool bias,
            Precision precision)
      : bias(bias ? PlainDesc({w[0]}) : memory::desc()),
        winograd_{PrefersWinograd(p, x, w, y, precision, ConvPass::kForward),
                  PrefersWinograd(p, x, w, y, precision, ConvPass::kBackwardData),
                  PrefersWinograd(p, x, w, y, precision, ConvPass::kBackwardWeights)} {
    const auto type =
        precision == Precision::kBF16 ? memory::data_type::bf16 : memory::data_type::f32;
    Shape w_dims = w;
    if (p.group > 1) w_dims = {p.group, w[0] / p.group, w[1], w[2], w[3]};
    x_md = AnyDesc(x, type);
    y_md = AnyDesc(y, type);
    w_in = AnyDesc(w_dims, type);
    w_out = AnyDesc(w_dims);
    w_plain = PlainDesc(w_dims);
    strides = {p.stride, p.stride};
    dilates = {p.dilation - 1, p.dilation - 1};
    pads = {p.pad, p.pad};
  }

  dnnl::convolution_forward::primitive_desc Forward(const dnnl::engine& engine) const {
    return Create(ConvPass::kForward, [&](algorithm a) {
      dnnl::convolution_forward::desc desc(prop_kind::forward_training, a, x_md, w_in, bias, y_md,
                                           strides, dilates, pads, pads);
      return dnnl::convolution_forward::primitive_desc(desc, Attributes(), engine);
    });
  }

  dnnl::convolution_backward_weights::primitive_desc BackwardWeights(
      const dnnl::engine& engine, const dnnl::convolution_forward::primitive_desc& hint) const {
    return Create(ConvPass::kBackwardWeights, [&](algorithm a) {
      dnnl::convolution_backward_weights::desc desc(a, x_md, w_out, bias, y_md, strides, dilates,
                                                    pads, pads);
      return dnnl::convolution_backward_weights::primitive_desc(desc, Attributes(), engine, hint);
    });
  }

  dnnl::convolution_backward_data::primitive_desc BackwardData(
      const dnnl::engine& engine, const dnnl::convolution_forward::primitive_desc& hint) const {
    return Create(ConvPass::kBackwardData, [&](algorithm a) {
      dnnl::convolution_backward_data::desc desc(a, x_md, w_in, y_md, strides, dilates, pads, pads);
      return dnnl::convolution_backward_data::primitive_desc(desc, Attributes(), engine, hint);
    });
  }

  memory::desc x_md, y_md, w_in, w_out;  // layout "any"
  memory::desc bias, w_plain;            // w in oihw, or goihw with groups
  memory::dims strides, dilates, pads;

 private:
  // The primitive descriptor `make(algorithm)` gives for Winograd where PrefersWinograd picks it
  // for `pass` and oneDNN implements it on this CPU (its Winograd kernels need AVX-512), for
  // direct otherwise.
  template <class Make>
  auto Create(ConvPass pass, Make make) const -> decltype(make(algorithm::convolution_direct)) {
    if (winograd_[static_cast<int>(pass)]) {
      try {
        return make(algorithm::convolution_winograd);
      } catch (const dnnl::error& e) {
        if (e.status != dnnl_unimplemented) throw;
      }
    }
    return make(algorithm::convolution_direct);
  }

  const bool winograd_[3];  // by ConvPass
};

}  // namespace

ConvOp::ConvOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), params_(def), amx_(CpuHasAmx()) {}

void ConvOp::Build(const memory::desc& x_md) {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Tensor* b = Bias();
  y_shape_ = ConvOutputShape(def(), params_, x.shape(), w.shape(), b ? &b->shape() : nullptr);
  matmul_.reset();
  if (PrefersMatmul(params_, y_shape_, b != nullptr, context_->precision(), ConvPass::kForward,
                    amx_)) {
    matmul_.emplace();
    matmul_->Build(params_.stride, params_.pad, x.shape(), w.shape(), y_shape_,
                   memory::data_type::bf16, {ConvPass::kForward}, context_);
    implementation_ = matmul_->forward_implementation;
    return;
  }
  ConvDescs descs(params_, x.shape(), w.shape(), y_shape_, b != nullptr, context_->precision());
  auto pd = descs.Forward(context_->engine());
  implementation_ = pd.impl_info_str();
  y_md_ = pd.dst_desc();
  forward_.Build(dnnl::convolution_forward(pd), x_md, x_md, pd.src_desc(), descs.w_plain,
                 pd.weights_desc(), w, b);
}

void ConvOp::Run() {
  const memory::desc x_md = DescOf(Input(0));
  const bool stale = matmul_ ? matmul_->Stale(Input(0).shape(), Input(1).shape())
                             : forward_.Stale(x_md, Input(1), Bias());
  if (stale) Build(x_md);
  Tensor* y = Output(0);
  if (matmul_) {
    matmul_->Forward(Input(0), Input(1), y, context_);
    return;
  }
  ResizeTo(y, y_shape_, y_md_);
  forward_.Run(Input(0), Input(1), Bias(), Wrap(*y, y_md_, context_), context_);
}

ConvGradientOp::ConvGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      params_(def),
      amx_(CpuHasAmx()),
      want_weights_(HasOutput(0) || HasOutput(1)),
      want_bias_(HasOutput(1)),
      want_data_(HasOutput(2)) {}

void ConvGradientOp::Build(const memory::desc& x_md, const memory::desc& dy_md) {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Shape y_shape = ConvOutputShape(def(), params_, x.shape(), w.shape(), nullptr);
  EnforceInputShape(2, y_shape);
  x_md_ = x_md;
  dy_md_ = dy_md;
  w_shape_ = w.shape();
  const auto matmul = [&](ConvPass pass) {
    return PrefersMatmul(params_, y_shape, want_bias_, context_->precision(), pass, amx_);
  };
  matmul_weights_ = want_weights_ && matmul(ConvPass::kBackwardWeights);
  matmul_data_ = want_data_ && matmul(ConvPass::kBackwardData);
  matmul_.reset();
  if (matmul_weights_ || matmul_data_) {
    std::vector<ConvPass> passes;
    if (matmul_weights_) passes.push_back(ConvPass::kBackwardWeights);
    if (matmul_data_) passes.push_back(ConvPass::kBackwardData);
    matmul_.emplace();
    matmul_->Build(params_.stride, params_.pad, x.shape(), w.shape(), y_shape,
                   memory::data_type::bf16, passes, context_);
    if (matmul_weights_) weights_implementation_ = matmul_->weights_implementation;
    if (matmul_data_) data_implementation_ = matmul_->data_implementation;
  }
  const bool own_weights = want_weights_ && !matmul_weights_,
             own_data = want_data_ && !matmul_data_;
  amx_weights_.reset();
  if (!own_weights && !own_data) return;
  ConvDescs descs(params_, x.shape(), w.shape(), y_shape, want_bias_, context_->precision());
  w_plain_md_ = descs.w_plain;
  auto hint = descs.Forward(context_->engine());
  if (own_weights &&
      PrefersAmxWeightGradient(params_, x.shape(), w.shape(), want_bias_, context_->precision())) {
    amx_weights_.emplace();
    amx_weights_->Build(x.shape(), w.shape());
    weights_implementation_ = AmxConvWeightGradient::kImplementation;
  } else if (own_weights) {
    auto pd = descs.BackwardWeights(context_->engine(), hint);
    weights_.Build(dnnl::convolution_backward_weights(pd), pd.diff_weights_desc(), descs.w_plain,
                   w.shape());
    weights_implementation_ = pd.impl_info_str();
    bw_x_md_ = pd.src_desc();
    bw_dy_md_ = pd.diff_dst_desc();
  }
  if (own_data) {
    auto pd = descs.BackwardData(context_->engine(), hint);
    data_primitive_ = dnnl::convolution_backward_data(pd);
    data_implementation_ = pd.impl_info_str();
    bd_w_md_ = pd.weights_desc();
    bd_dy_md_ = pd.diff_dst_desc();
    dx_md_ = pd.diff_src_desc();
    share_dy_ = own_weights && !amx_weights_ && bw_dy_md_ == bd_dy_md_;
  }
}

void ConvGradientOp::Run() {
  const Tensor& x = Input(0);
  const Tensor& w = Input(1);
  const Tensor& dy = Input(2);
  memory::desc x_md = DescOf(x), dy_md = DescOf(dy);
  if (x_md != x_md_ || dy_md != dy_md_ || w.shape() != w_shape_) Build(x_md, dy_md);
  if (matmul_) {
    matmul_->Backward(x, w, dy, matmul_weights_ ? Output(0) : nullptr,
                      matmul_data_ ? Output(2) : nullptr, context_);
  }
  memory dy_for_weights;
  if (amx_weights_) {
    amx_weights_->Run(x, dy, Output(0), context_);
  } else if (want_weights_ && !matmul_weights_) {
    dy_for_weights = dy_for_weights_.Convert(dy, dy_md_, bw_dy_md_, context_);
    weights_.Run(x_for_weights_.Convert(x, x_md_, bw_x_md_, context_), dy_for_weights,
                 HasOutput(0) ? Output(0) : nullptr, want_bias_ ? Output(1) : nullptr, context_);
  }
  if (want_data_ && !matmul_data_)
    BackwardData(
        w, share_dy_ ? dy_for_weights : dy_for_data_.Convert(dy, dy_md_, bd_dy_md_, context_));
}

void ConvGradientOp::BackwardData(const Tensor& w, const memory& dy) {
  Tensor* dx = Output(2);
  ResizeTo(dx, Input(0).shape(), dx_md_);
  Execute(data_primitive_,
          {{DNNL_ARG_DIFF_DST, dy},
           {DNNL_ARG_WEIGHTS, w_for_data_.Convert(w, w_plain_md_, bd_w_md_, context_)},
           {DNNL_ARG_DIFF_SRC, Wrap(*dx, dx_md_, context_)}},
          context_);
}

namespace {

std::vector<TensorShape> InferConv(const OperatorDef& def, const std::vector<TensorShape>& in) {
  const Shape* b = in.size() == 3 ? &in[2].dims : nullptr;
  return {{ConvOutputShape(def, ConvParams(def), in[0].dims, in[1].dims, b)}};
}

std::vector<TensorShape> InferConvGradient(const OperatorDef& def,
                                           const std::vector<TensorShape>& in) {
  const Shape y = ConvOutputShape(def, ConvParams(def), in[0].dims, in[1].dims, nullptr);
  CROSSBOW_ENFORCE_VALUE(in[2].dims == y, def.Label(), ": input 2 '", def.inputs[2], "' has shape ",
                         ShapeString(in[2].dims), ", expected ", ShapeString(y));
  return {in[1], {{in[1].dims[0]}}, in[0]};
}

}  // namespace

OPERATOR_SCHEMA(Conv)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .ShapeInference(InferConv)
    .Doc(
        "2-D convolution (cross-correlation) with a square kernel, symmetric padding, "
        "dilation and groups: Y = conv(X, W) + b.")
    .Input(0, "X", "[N, C, H, W], any layout")
    .Input(1, "W", "[M, C/group, kernel, kernel], plain")
    .Input(2, "b", "optional bias [M], plain")
    .Output(0, "Y",
            "[N, M, Ho, Wo], Ho = (H + 2 pad - dilation (kernel - 1) - 1) / stride + 1, "
            "in the layout oneDNN picks (blocked)")
    .Arg("kernel", "int, required: kernel height and width")
    .Arg("stride", "int, default 1")
    .Arg("pad", "int, default 0: zero padding on every side")
    .Arg("dilation", "int, default 1")
    .Arg("group", "int, default 1: C and M split into this many independent groups");
REGISTER_CPU_OPERATOR(Conv, ConvOp);

OPERATOR_SCHEMA(ConvGradient)
    .NumInputs(3)
    .NumOutputs(3)
    .ShapeInference(InferConvGradient)
    .Doc(
        "Gradients of Conv with respect to its weights, bias and input. Unnamed outputs are "
        "not computed; without dX the backward-data pass is skipped.")
    .Input(0, "X", "Conv's input")
    .Input(1, "W", "Conv's weights")
    .Input(2, "dY", "gradient of Y, any layout")
    .Output(0, "dW", "gradient of W, plain")
    .Output(1, "db", "gradient of b [M], plain; unnamed when Conv has no bias")
    .Output(2, "dX", "gradient of X, in the layout oneDNN picks; may be unnamed")
    .Arg("kernel", "as in Conv")
    .Arg("stride", "as in Conv")
    .Arg("pad", "as in Conv")
    .Arg("dilation", "as in Conv")
    .Arg("group", "as in Conv");
REGISTER_CPU_OPERATOR(ConvGradient, ConvGradientOp);

REGISTER_GRADIENT(Conv, [](const GradientHelper& g) {
  const bool bias = g.def().inputs.size() == 3;
  return std::vector<OperatorDef>{
      g.Op("ConvGradient", {g.I(0), g.I(1), g.GO(0)}, {g.GI(1), bias ? g.GI(2) : "", g.GI(0)})};
});
NO_GRADIENT(ConvGradient);

}  // namespace crossbow
