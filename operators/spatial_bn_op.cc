#include "operators/spatial_bn_op.h"

#include "crossbow/core/fusion.h"
#include "operators/channels_last_bn.h"
#include "operators/element_type.h"

namespace crossbow {

using namespace dnnl_utils;
using dnnl::normalization_flags;
using dnnl::prop_kind;

namespace {

// SpatialBN's flags, and SpatialBNRelu's: the ReLU fused into the same pass.
template <bool kRelu>
normalization_flags Flags() {
  const normalization_flags scale_shift =
      normalization_flags::use_scale | normalization_flags::use_shift;
  return kRelu ? scale_shift | normalization_flags::fuse_norm_relu : scale_shift;
}

// Training's outputs: Y, the running statistics, the saved ones, and SpatialBNRelu's mask.
template <bool kRelu>
constexpr int kTrainingOutputs = kRelu ? 6 : 5;

ChannelsLastBN ChannelsLastKernel(const Tensor& x, float epsilon, bool relu) {
  return {x.dim(0) * x.dim(2) * x.dim(3), x.dim(1), epsilon, relu};
}

}  // namespace

template <bool kRelu>
SpatialBNOp<kRelu>::SpatialBNOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      epsilon_(Arg<float>("epsilon", 1e-5f)),
      momentum_(Arg<float>("momentum", 0.9f)),
      is_test_(Arg<bool>("is_test", false)) {
  CROSSBOW_ENFORCE_VALUE(is_test_ || OutputSize() == kTrainingOutputs<kRelu>, def.Label(),
                         ": training needs ", kTrainingOutputs<kRelu>,
                         " outputs (Y, running_mean, running_var, saved_mean, saved_var",
                         kRelu ? ", mask" : "", "), got ", OutputSize());
}

template <bool kRelu>
void SpatialBNOp<kRelu>::Run() {
  const Tensor& x = Input(0);
  EnforceBNShapes(def(), [&](int i) -> const Shape& { return Input(i).shape(); }, {1, 2, 3, 4});
  const memory::desc x_md = DescOf(x);
  if (x_md != x_md_) {
    channels_last_ = IsChannelsLast(x_md);
    if (channels_last_) {
      mask_md_ = ChannelsLastDesc(x_md.dims(), memory::data_type::u8);
    } else {
      const auto flags =
          is_test_ ? Flags<kRelu>() | normalization_flags::use_global_stats : Flags<kRelu>();
      auto desc = dnnl::batch_normalization_forward::desc(
          is_test_ ? prop_kind::forward_inference : prop_kind::forward_training, x_md, epsilon_,
          flags);
      dnnl::batch_normalization_forward::primitive_desc pd(desc, Attributes(), context_->engine());
      primitive_ = dnnl::batch_normalization_forward(pd);
      mask_md_ = pd.workspace_desc();
    }
    x_md_ = x_md;
    c_md_ = PlainDesc({x.dim(1)});
  }
  Tensor* y = Output(0);
  ResizeTo(y, x.shape(), x_md);
  const ChannelsLastBN kernel = ChannelsLastKernel(x, epsilon_, kRelu);
  // oneDNN's arguments, with the statistics Y is normalised by.
  const auto onednn_args = [&](const Tensor& mean, const Tensor& var) {
    return std::unordered_map<int, memory>{{DNNL_ARG_SRC, Wrap(x, x_md, context_)},
                                           {DNNL_ARG_DST, Wrap(*y, x_md, context_)},
                                           {DNNL_ARG_SCALE, Wrap(Input(1), c_md_, context_)},
                                           {DNNL_ARG_SHIFT, Wrap(Input(2), c_md_, context_)},
                                           {DNNL_ARG_MEAN, Wrap(mean, c_md_, context_)},
                                           {DNNL_ARG_VARIANCE, Wrap(var, c_md_, context_)}};
  };
  if (is_test_) {
    if (channels_last_) {
      WithElementType(x, [&](auto* type) {
        using T = std::remove_pointer_t<decltype(type)>;
        kernel.Normalize(Elements<T>(x), Input(1).data<float>(), Input(2).data<float>(),
                         Input(3).data<float>(), Input(4).data<float>(), Elements<T>(y), nullptr);
      });
      return;
    }
    Execute(primitive_, onednn_args(Input(3), Input(4)), context_);
    return;
  }
  const int64_t count = x.dim(0) * x.dim(2) * x.dim(3);
  CROSSBOW_ENFORCE_VALUE(count > 1, def().Label(), ": training needs more than one value per ",
                         "channel, input 0 '", def().inputs[0], "' has shape ",
                         ShapeString(x.shape()));
  Tensor* mean = OutputOr(this, 3, &mean_scratch_);
  Tensor* var = OutputOr(this, 4, &var_scratch_);
  mean->Resize({x.dim(1)});
  var->Resize({x.dim(1)});
  if (kRelu) Output(5)->ResizeBlocked(x.shape(), mask_md_);
  if (channels_last_) {
    WithElementType(x, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      kernel.ForwardTraining(Elements<T>(x), Input(1).data<float>(), Input(2).data<float>(),
                             mean->mutable_data<float>(), var->mutable_data<float>(),
                             Elements<T>(y), kRelu ? Elements<uint8_t>(Output(5)) : nullptr);
    });
  } else {
    auto args = onednn_args(*mean, *var);
    if (kRelu) args.emplace(DNNL_ARG_WORKSPACE, Wrap(*Output(5), mask_md_, context_));
    Execute(primitive_, std::move(args), context_);
  }
  UpdateRunningStats(*mean, *var, count);
}

// running = momentum * running + (1 - momentum) * batch, with the unbiased batch variance.
template <bool kRelu>
void SpatialBNOp<kRelu>::UpdateRunningStats(const Tensor& mean, const Tensor& var, int64_t count) {
  const float unbias = static_cast<float>(count) / static_cast<float>(count - 1);
  const float* batch_mean = mean.data<float>();
  const float* batch_var = var.data<float>();
  float* running_mean = Output(1)->mutable_data<float>();
  float* running_var = Output(2)->mutable_data<float>();
  for (int64_t c = 0; c < mean.numel(); ++c) {
    running_mean[c] = momentum_ * running_mean[c] + (1.f - momentum_) * batch_mean[c];
    running_var[c] = momentum_ * running_var[c] + (1.f - momentum_) * batch_var[c] * unbias;
  }
}

template <bool kRelu>
SpatialBNGradientOp<kRelu>::SpatialBNGradientOp(const OperatorDef& def, Workspace* ws,
                                                CPUContext* context)
    : Operator(def, ws, context), epsilon_(Arg<float>("epsilon", 1e-5f)) {}

template <bool kRelu>
void SpatialBNGradientOp<kRelu>::Run() {
  const Tensor& x = Input(0);
  EnforceBNShapes(def(), [&](int i) -> const Shape& { return Input(i).shape(); }, {1, 2, 3});
  EnforceInputShape(4, x.shape());
  const memory::desc x_md = DescOf(x);
  if (x_md != x_md_) {
    channels_last_ = IsChannelsLast(x_md);
    if (channels_last_) {
      mask_md_ = ChannelsLastDesc(x_md.dims(), memory::data_type::u8);
    } else {
      auto hint_desc = dnnl::batch_normalization_forward::desc(prop_kind::forward_training, x_md,
                                                               epsilon_, Flags<kRelu>());
      dnnl::batch_normalization_forward::primitive_desc hint(hint_desc, context_->engine());
      auto desc = dnnl::batch_normalization_backward::desc(prop_kind::backward, x_md, x_md,
                                                           epsilon_, Flags<kRelu>());
      primitive_ =
          dnnl::batch_normalization_backward({desc, Attributes(), context_->engine(), hint});
      mask_md_ = hint.workspace_desc();
    }
    x_md_ = x_md;
    c_md_ = PlainDesc({x.dim(1)});
  }
  if (kRelu) {
    CROSSBOW_ENFORCE_VALUE(DescOf(Input(5)) == mask_md_, def().Label(), ": input 5 '",
                           def().inputs[5], "' is not the mask of a SpatialBNRelu of X ",
                           ShapeString(x.shape()), " in X's layout");
  }
  const Tensor* dy = &dy_to_x_layout_.As(Input(4), x_md, context_);
  Tensor* dx = OutputOr(this, 0, &dx_scratch_);
  Tensor* dscale = OutputOr(this, 1, &dscale_scratch_);
  Tensor* dbias = OutputOr(this, 2, &dbias_scratch_);
  ResizeTo(dx, x.shape(), x_md);
  dscale->Resize({x.dim(1)});
  dbias->Resize({x.dim(1)});
  if (channels_last_) {
    WithElementType(x, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      ChannelsLastKernel(x, epsilon_, kRelu)
          .Backward(Elements<T>(x), Elements<T>(*dy), kRelu ? Elements<uint8_t>(Input(5)) : nullptr,
                    Input(1).data<float>(), Input(2).data<float>(), Input(3).data<float>(),
                    Elements<T>(dx), dscale->mutable_data<float>(), dbias->mutable_data<float>());
    });
    return;
  }
  const memory scale = Wrap(Input(1), c_md_, context_);
  // oneDNN 2.6 insists on a shift argument here although no gradient depends on its values.
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, Wrap(x, x_md, context_)},
                                       {DNNL_ARG_SCALE, scale},
                                       {DNNL_ARG_SHIFT, scale},
                                       {DNNL_ARG_MEAN, Wrap(Input(2), c_md_, context_)},
                                       {DNNL_ARG_VARIANCE, Wrap(Input(3), c_md_, context_)},
                                       {DNNL_ARG_DIFF_DST, Wrap(*dy, x_md, context_)},
                                       {DNNL_ARG_DIFF_SRC, Wrap(*dx, x_md, context_)},
                                       {DNNL_ARG_DIFF_SCALE, Wrap(*dscale, c_md_, context_)},
                                       {DNNL_ARG_DIFF_SHIFT, Wrap(*dbias, c_md_, context_)}};
  if (kRelu) args.emplace(DNNL_ARG_WORKSPACE, Wrap(Input(5), mask_md_, context_));
  Execute(primitive_, std::move(args), context_);
}

namespace {

// The schema that SpatialBN and SpatialBNRelu share: inputs, outputs 0-4, arguments, shapes.
template <bool kRelu>
void ForwardSchema(OpSchema& schema) {
  schema.NumInputs(5)
      .NumOutputs(1, kTrainingOutputs<kRelu>)
      .EnforceInplace({{3, 1}, {4, 2}})
      .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
        EnforceBNShapes(def, [&](int i) -> const Shape& { return in[i].dims; }, {1, 2, 3, 4});
        CROSSBOW_ENFORCE_VALUE(
            def.Arg<bool>("is_test", false) || def.outputs.size() == kTrainingOutputs<kRelu>,
            def.Label(), ": training needs ", kTrainingOutputs<kRelu>, " outputs, got ",
            def.outputs.size());
        std::vector<TensorShape> out(def.outputs.size(), in[1]);
        out[0] = in[0];
        if (out.size() > 5) out[5] = TensorShape{in[0].dims, DataType::kUInt8};
        return out;
      })
      .Input(0, "X", "[N, C, H, W], any layout")
      .Input(1, "scale", "[C], plain")
      .Input(2, "bias", "[C], plain")
      .Input(3, "running_mean", "[C], plain")
      .Input(4, "running_var", "[C], plain")
      .Output(0, "Y", "X's shape and layout")
      .Output(1, "running_mean", "input 3, updated in place (training)")
      .Output(2, "running_var", "input 4, updated in place (training)")
      .Output(3, "saved_mean", "[C]: the batch mean (training)")
      .Output(4, "saved_var", "[C]: the biased batch variance (training)")
      .Arg("epsilon", "float, default 1e-5: added to the variance")
      .Arg("momentum", "float, default 0.9: running = momentum running + (1 - momentum) batch")
      .Arg("is_test", "int, default 0: normalise with the running statistics");
}

template <bool kRelu>
void GradientSchema(OpSchema& schema) {
  schema.NumInputs(kRelu ? 6 : 5)
      .NumOutputs(3)
      .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
        EnforceBNShapes(def, [&](int i) -> const Shape& { return in[i].dims; }, {1, 2, 3});
        CROSSBOW_ENFORCE_VALUE(in[4].dims == in[0].dims, def.Label(), ": input 4 '", def.inputs[4],
                               "' has shape ", ShapeString(in[4].dims), ", expected ",
                               ShapeString(in[0].dims));
        return std::vector<TensorShape>{in[0], in[1], in[1]};
      })
      .Input(0, "X", "the forward operator's input")
      .Input(1, "scale", "[C]")
      .Input(2, "saved_mean", "[C]: the forward operator's output 3")
      .Input(3, "saved_var", "[C]: the forward operator's output 4")
      .Input(4, "dY", "gradient of Y, any layout")
      .Output(0, "dX", "gradient of X, in X's layout")
      .Output(1, "dscale", "[C], plain")
      .Output(2, "dbias", "[C], plain")
      .Arg("epsilon", "float, default 1e-5: as in the forward operator");
}

// The gradient of a training SpatialBN(Relu): from X, scale, the saved statistics, dY (and the
// mask).
template <bool kRelu>
std::vector<OperatorDef> BNGradient(const GradientHelper& g) {
  const OperatorDef& def = g.def();
  const int n = kTrainingOutputs<kRelu>;
  CROSSBOW_ENFORCE_VALUE(!def.Arg<bool>("is_test", false) &&
                             def.outputs.size() == static_cast<size_t>(n) && !g.O(3).empty() &&
                             !g.O(4).empty() && !g.O(n - 1).empty(),
                         def.Label(), ": has a gradient only in training (is_test=0) with ",
                         kRelu ? "saved_mean, saved_var and mask (outputs 3, 4 and 5)"
                               : "saved_mean and saved_var (outputs 3 and 4)",
                         " named");
  std::vector<std::string> inputs = {g.I(0), g.I(1), g.O(3), g.O(4), g.GO(0)};
  if (kRelu) inputs.push_back(g.O(5));
  return {g.Op(kRelu ? "SpatialBNReluGradient" : "SpatialBNGradient", std::move(inputs),
               {g.GI(0), g.GI(1), g.GI(2)})};
}

}  // namespace

OPERATOR_SCHEMA(SpatialBN)
    .With(ForwardSchema<false>)
    .Doc(
        "Batch normalisation per channel: Y = scale (X - mean) / sqrt(var + epsilon) + bias. "
        "Training uses the batch statistics and updates the running ones in place "
        "(running_var with the unbiased batch variance, as PyTorch); is_test uses the running "
        "statistics and writes only Y.");
REGISTER_CPU_OPERATOR(SpatialBN, SpatialBNOp<false>);

OPERATOR_SCHEMA(SpatialBNRelu)
    .With(ForwardSchema<true>)
    .Output(5, "mask", "where Y > 0, in the device's own encoding (training; for the gradient)")
    .Doc(
        "SpatialBN followed by Relu in one pass: Y = max(SpatialBN(X), 0). Net compilation "
        "makes it from a SpatialBN whose output only a Relu reads (FuseOperators).");
REGISTER_CPU_OPERATOR(SpatialBNRelu, SpatialBNOp<true>);

OPERATOR_SCHEMA(SpatialBNGradient)
    .With(GradientSchema<false>)
    .Doc("Gradient of SpatialBN in training, from the saved batch statistics.");
REGISTER_CPU_OPERATOR(SpatialBNGradient, SpatialBNGradientOp<false>);

OPERATOR_SCHEMA(SpatialBNReluGradient)
    .With(GradientSchema<true>)
    .Input(5, "mask", "SpatialBNRelu's output 5")
    .Doc("Gradient of SpatialBNRelu in training: SpatialBNGradient of dY where Y > 0, else 0.");
REGISTER_CPU_OPERATOR(SpatialBNReluGradient, SpatialBNGradientOp<true>);

REGISTER_GRADIENT(SpatialBN, BNGradient<false>);
REGISTER_GRADIENT(SpatialBNRelu, BNGradient<true>);
NO_GRADIENT(SpatialBNGradient);
NO_GRADIENT(SpatialBNReluGradient);

// A SpatialBN whose output only a Relu reads becomes a SpatialBNRelu that writes the Relu's
// output (and, in training, a mask named after it).
REGISTER_FUSION(SpatialBN, Relu, [](const OperatorDef& bn, const OperatorDef& relu) {
  OperatorDef fused = bn;
  fused.type = "SpatialBNRelu";
  fused.outputs[0] = relu.outputs[0];
  if (fused.outputs.size() == 5) fused.outputs.push_back(bn.outputs[0] + "_relu_mask");
  return fused;
});

}  // namespace crossbow
