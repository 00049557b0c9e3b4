#include "operators/pool_op.h"

#include "operators/channels_last_max_pool.h"
#include "operators/element_type.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::algorithm;
using dnnl::prop_kind;

PoolWindow ComputePoolWindow(const OperatorDef& def, PoolKind kind, const Shape& x) {
  CROSSBOW_ENFORCE_VALUE(x.size() == 4, def.Label(), ": input 0 '", def.inputs.at(0),
                         "' has shape ", ShapeString(x), ", expected [N, C, H, W]");
  PoolWindow w;
  if (kind == PoolKind::kGlobalAverage) {
    w.kernel = {x[2], x[3]};
    w.strides = {1, 1};
    w.padding = {0, 0};
    w.output = {x[0], x[1], 1, 1};
    return w;
  }
  const int64_t kernel = def.RequiredArg<int64_t>("kernel");
  const int64_t stride = def.Arg<int64_t>("stride", 1);
  const int64_t pad = def.Arg<int64_t>("pad", 0);
  CROSSBOW_ENFORCE_VALUE(kernel > 0 && stride > 0 && pad >= 0 && 2 * pad <= kernel, def.Label(),
                         ": needs kernel > 0, stride > 0 and 0 <= pad <= kernel / 2, got kernel ",
                         kernel, ", stride ", stride, ", pad ", pad);
  w.kernel = {kernel, kernel};
  w.strides = {stride, stride};
  w.padding = {pad, pad};
  w.output = {x[0], x[1]};
  for (int d = 2; d < 4; ++d) {
    CROSSBOW_ENFORCE_VALUE(x[d] + 2 * pad >= kernel, def.Label(), ": kernel ",
                           ShapeString({kernel, kernel}), " is larger than input 0 '",
                           def.inputs.at(0), "' of shape ", ShapeString(x), " padded by ", pad);
    w.output.push_back((x[d] + 2 * pad - kernel) / stride + 1);
  }
  return w;
}

namespace {

algorithm PoolAlgorithm(const OperatorDef& def, PoolKind kind) {
  if (kind == PoolKind::kMax) return algorithm::pooling_max;
  return def.Arg<bool>("count_include_pad", false) ? algorithm::pooling_avg_include_padding
                                                   : algorithm::pooling_avg_exclude_padding;
}

// Floor-mode output sizes satisfy oneDNN's (H - kernel + 2 pad) / stride + 1 with its integer
// division, so the right padding is the left one even where the last window stops short.
dnnl::pooling_forward::primitive_desc ForwardDesc(const OperatorDef& def, PoolKind kind,
                                                  const PoolWindow& w, const memory::desc& x_md,
                                                  const memory::desc& y_md, prop_kind prop,
                                                  const dnnl::engine& engine) {
  auto desc = dnnl::pooling_forward::desc(prop, PoolAlgorithm(def, kind), x_md, y_md, w.strides,
                                          w.kernel, w.padding, w.padding);
  return {desc, Attributes(), engine};
}

// MaxPool of channels-last X runs in ChannelsLastMaxPool, whose Y and argmax are channels-last;
// the rest on oneDNN. The forward pass and the gradient both decide by this.
bool RunsChannelsLast(PoolKind kind, const memory::desc& x_md, const PoolWindow& w) {
  return kind == PoolKind::kMax && IsChannelsLast(x_md) && ChannelsLastMaxPool::Fits(w.kernel[0]);
}

ChannelsLastMaxPool ChannelsLastKernel(const Shape& x, const PoolWindow& w) {
  return {x[0],        x[1],        x[2],         x[3],        w.output[2],
          w.output[3], w.kernel[0], w.strides[0], w.padding[0]};
}

}  // namespace

template <PoolKind kKind>
void PoolOp<kKind>::Run() {
  const Tensor& x = Input(0);
  const memory::desc x_md = DescOf(x);
  // Only a named workspace output means a gradient will follow.
  Tensor* workspace = kKind == PoolKind::kMax && HasOutput(1) ? Output(1) : nullptr;
  if (x_md != x_md_) {
    window_ = ComputePoolWindow(def(), kKind, x.shape());
    channels_last_ = RunsChannelsLast(kKind, x_md, window_);
    if (channels_last_) {
      y_md_ = ChannelsLastDesc(Dims(window_.output), x_md.data_type());
      workspace_md_ = ChannelsLastDesc(Dims(window_.output), memory::data_type::u8);
    } else {
      const prop_kind prop = workspace ? prop_kind::forward_training : prop_kind::forward_inference;
      pd_ = ForwardDesc(def(), kKind, window_, x_md, AnyDesc(window_.output, x_md.data_type()),
                        prop, context_->engine());
      primitive_ = dnnl::pooling_forward(pd_);
      y_md_ = pd_.dst_desc();
      workspace_md_ = pd_.workspace_desc();
    }
    x_md_ = x_md;
  }
  Tensor* y = Output(0);
  ResizeTo(y, window_.output, y_md_);
  if (workspace) workspace->ResizeBlocked(window_.output, workspace_md_);
  if (channels_last_) {
    WithElementType(x, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      ChannelsLastKernel(x.shape(), window_)
          .Forward(Elements<T>(x), Elements<T>(y),
                   workspace ? Elements<uint8_t>(workspace) : nullptr);
    });
    return;
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, Wrap(x, x_md, context_)},
                                       {DNNL_ARG_DST, Wrap(*y, y_md_, context_)}};
  if (workspace) args.emplace(DNNL_ARG_WORKSPACE, Wrap(*workspace, workspace_md_, context_));
  Execute(primitive_, std::move(args), context_);
}

template <PoolKind kKind>
void PoolGradientOp<kKind>::EnforceOutputShapes(const Shape& y) const {
  if (kKind == PoolKind::kMax) EnforceInputShape(1, y);
  EnforceInputShape(kKind == PoolKind::kMax ? 2 : 1, y);
}

template <PoolKind kKind>
void PoolGradientOp<kKind>::Run() {
  constexpr bool kMax = kKind == PoolKind::kMax;
  const Tensor& x = Input(0);
  const Tensor& dy_in = Input(kMax ? 2 : 1);
  const memory::desc x_md = DescOf(x);
  // MaxPool's workspace indexes Y's layout, so dY must come in it; average pooling takes dY
  // in the layout its forward writes from X (a plain dY against a channels-last X sends
  // oneDNN to its reference loop: 48 ms of ResNet-50's step on AMX, against 0.2).
  const memory::desc y_md = kMax ? DescOf(Input(1)) : y_md_;
  if (x_md != x_md_ || y_md != y_md_) {
    window_ = ComputePoolWindow(def(), kKind, x.shape());
    EnforceOutputShapes(window_.output);  // before oneDNN sees them
    channels_last_ = RunsChannelsLast(kKind, x_md, window_);
    if (channels_last_) {
      y_md_ = ChannelsLastDesc(Dims(window_.output), x_md.data_type());
      dx_md_ = x_md;
      workspace_md_ = ChannelsLastDesc(Dims(window_.output), memory::data_type::u8);
    } else {
      auto hint = ForwardDesc(def(), kKind, window_, x_md,
                              kMax ? y_md : AnyDesc(window_.output, x_md.data_type()),
                              prop_kind::forward_training, context_->engine());
      y_md_ = hint.dst_desc();
      auto desc =
          dnnl::pooling_backward::desc(PoolAlgorithm(def(), kKind), x_md, y_md_, window_.strides,
                                       window_.kernel, window_.padding, window_.padding);
      pd_ = dnnl::pooling_backward::primitive_desc(desc, Attributes(), context_->engine(), hint);
      primitive_ = dnnl::pooling_backward(pd_);
      dx_md_ = pd_.diff_src_desc();
      workspace_md_ = pd_.workspace_desc();
    }
    x_md_ = x_md;
  }
  EnforceOutputShapes(window_.output);
  const Tensor* dy = &dy_to_y_layout_.As(dy_in, y_md_, context_);
  Tensor* dx = Output(0);
  ResizeTo(dx, x.shape(), dx_md_);
  const Tensor* workspace = kMax ? &Input(3) : nullptr;
  if (kMax) {
    CROSSBOW_ENFORCE_VALUE(DescOf(*workspace) == workspace_md_, def().Label(), ": input 3 '",
                           def().inputs[3], "' of shape ", ShapeString(workspace->shape()),
                           " is not the workspace of a MaxPool of X ", ShapeString(x.shape()));
  }
  if (channels_last_) {
    WithElementType(x, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      ChannelsLastKernel(x.shape(), window_)
          .Backward(Elements<T>(*dy), Elements<uint8_t>(*workspace), Elements<T>(dx));
    });
    return;
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_DIFF_DST, Wrap(*dy, y_md_, context_)},
                                       {DNNL_ARG_DIFF_SRC, Wrap(*dx, dx_md_, context_)}};
  if (kMax) args.emplace(DNNL_ARG_WORKSPACE, Wrap(*workspace, context_));
  Execute(primitive_, std::move(args), context_);
}

template class PoolOp<PoolKind::kMax>;
template class PoolOp<PoolKind::kAverage>;
template class PoolOp<PoolKind::kGlobalAverage>;
template class PoolGradientOp<PoolKind::kMax>;
template class PoolGradientOp<PoolKind::kAverage>;
template class PoolGradientOp<PoolKind::kGlobalAverage>;

namespace {

ShapeInferenceFn InferPool(PoolKind kind) {
  return [kind](const OperatorDef& def, const std::vector<TensorShape>& in) {
    const Shape y = ComputePoolWindow(def, kind, in[0].dims).output;
    std::vector<TensorShape> out{{y, DataType::kFloat32}};
    if (def.outputs.size() > 1) out.push_back({y, DataType::kInt32});
    return out;
  };
}

// dX has X's shape; dY must have the forward output's.
ShapeInferenceFn InferPoolGradient(PoolKind kind) {
  return [kind](const OperatorDef& def, const std::vector<TensorShape>& in) {
    const Shape y = ComputePoolWindow(def, kind, in[0].dims).output;
    const int dy = kind == PoolKind::kMax ? 2 : 1;
    CROSSBOW_ENFORCE_VALUE(in[dy].dims == y, def.Label(), ": input ", dy, " '", def.inputs[dy],
                           "' has shape ", ShapeString(in[dy].dims), ", expected ", ShapeString(y));
    return std::vector<TensorShape>{in[0]};
  };
}

}  // namespace

OPERATOR_SCHEMA(MaxPool)
    .NumInputs(1)
    .NumOutputs(1, 2)
    .ShapeInference(InferPool(PoolKind::kMax))
    .Doc("Max over kernel x kernel windows; output size floor((H + 2 pad - kernel) / stride) + 1.")
    .Input(0, "X", "[N, C, H, W], any layout")
    .Output(0, "Y", "[N, C, OH, OW], in the layout oneDNN picks for X's")
    .Output(1, "workspace", "optional: which input won each window; name it to train")
    .Arg("kernel", "int, required: window height and width")
    .Arg("stride", "int, default 1")
    .Arg("pad", "int, default 0: zero padding on every side, at most kernel / 2");
REGISTER_CPU_OPERATOR(MaxPool, MaxPoolOp);

OPERATOR_SCHEMA(AveragePool)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference(InferPool(PoolKind::kAverage))
    .Doc("Mean over kernel x kernel windows; output size floor((H + 2 pad - kernel) / stride) + 1.")
    .Input(0, "X", "[N, C, H, W], any layout")
    .Output(0, "Y", "[N, C, OH, OW], in the layout oneDNN picks for X's")
    .Arg("kernel", "int, required: window height and width")
    .Arg("stride", "int, default 1")
    .Arg("pad", "int, default 0: zero padding on every side, at most kernel / 2")
    .Arg("count_include_pad", "int, default 0: divide by the whole window, padding included");
REGISTER_CPU_OPERATOR(AveragePool, AveragePoolOp);

OPERATOR_SCHEMA(GlobalAveragePool)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference(InferPool(PoolKind::kGlobalAverage))
    .Doc("Mean over each channel's whole image.")
    .Input(0, "X", "[N, C, H, W], any layout")
    .Output(0, "Y", "[N, C, 1, 1]");
REGISTER_CPU_OPERATOR(GlobalAveragePool, GlobalAveragePoolOp);

OPERATOR_SCHEMA(MaxPoolGradient)
    .NumInputs(4)
    .NumOutputs(1)
    .ShapeInference(InferPoolGradient(PoolKind::kMax))
    .Doc("Gradient of MaxPool: routes each dY to the input that won its window.")
    .Input(0, "X", "MaxPool's input")
    .Input(1, "Y", "MaxPool's output (its layout is the one the workspace indexes)")
    .Input(2, "dY", "gradient of Y, any layout")
    .Input(3, "workspace", "MaxPool's second output")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(MaxPoolGradient, MaxPoolGradientOp);

OPERATOR_SCHEMA(AveragePoolGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference(InferPoolGradient(PoolKind::kAverage))
    .Doc("Gradient of AveragePool: spreads each dY evenly over its window.")
    .Input(0, "X", "AveragePool's input (for its shape and layout)")
    .Input(1, "dY", "gradient of Y, any layout")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(AveragePoolGradient, AveragePoolGradientOp);

OPERATOR_SCHEMA(GlobalAveragePoolGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference(InferPoolGradient(PoolKind::kGlobalAverage))
    .Doc("Gradient of GlobalAveragePool: dX = dY / (H W), broadcast over each image.")
    .Input(0, "X", "GlobalAveragePool's input (for its shape and layout)")
    .Input(1, "dY", "gradient of Y, [N, C, 1, 1]")
    .Output(0, "dX", "gradient of X");
REGISTER_CPU_OPERATOR(GlobalAveragePoolGradient, GlobalAveragePoolGradientOp);

REGISTER_GRADIENT(MaxPool, [](const GradientHelper& g) {
  const auto& outputs = g.def().outputs;
  CROSSBOW_ENFORCE_VALUE(outputs.size() > 1 && !outputs[1].empty(), g.def().Label(),
                         ": its gradient needs the workspace; name MaxPool's second output");
  return std::vector<OperatorDef>{
      g.Op("MaxPoolGradient", {g.I(0), g.O(0), g.GO(0), g.O(1)}, {g.GI(0)})};
});
REGISTER_GRADIENT(AveragePool, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("AveragePoolGradient", {g.I(0), g.GO(0)}, {g.GI(0)})};
});
REGISTER_GRADIENT(GlobalAveragePool, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("GlobalAveragePoolGradient", {g.I(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(MaxPoolGradient);
NO_GRADIENT(AveragePoolGradient);
NO_GRADIENT(GlobalAveragePoolGradient);

}  // namespace crossbow
