#include "operators/blur_pool_op.h"

#include "operators/blur_pool.h"
#include "operators/parallel_threshold.h"

namespace crossbow {
int64_t BlurStride(const OperatorDef& def) {
  const int64_t stride = def.Arg<int64_t>("stride", 2);
  CROSSBOW_ENFORCE_VALUE(stride >= 1, def.Label(), ": stride must be >= 1, got ", stride);
  return stride;
}

Shape BlurPoolShape(const OperatorDef& def, const Shape& x) {
  CROSSBOW_ENFORCE_VALUE(x.size() == 4 && x[2] >= 2 && x[3] >= 2, def.Label(), ": input 0 '",
                         def.inputs[0], "' has shape ", ShapeString(x),
                         ", expected [N, C, H, W] with H, W >= 2 (the blur reflects one pixel)");
  const int64_t s = BlurStride(def);
  return {x[0], x[1], blur::OutSide(x[2], s), blur::OutSide(x[3], s)};
}

void BlurPoolOp::Run() {
  const Shape out = BlurPoolShape(def(), Input(0).shape());
  const Tensor& x = x_plain_.AsPlain(Input(0), context_);
  const int64_t s = BlurStride(def()), h = x.dim(2), w = x.dim(3), planes = out[0] * out[1];
  Tensor* y = Output(0);
  y->Resize(out);
  const float* in = x.data<float>();
  float* o = y->mutable_data<float>();
#pragma omp parallel for schedule(static) if (planes * h * w >= kMinParallelElements)
  for (int64_t p = 0; p < planes; ++p) {
    float* plane = o + p * out[2] * out[3];
    for (int64_t i = 0; i < out[2]; ++i) {
      for (int64_t j = 0; j < out[3]; ++j) {
        plane[i * out[3] + j] = blur::Output(in + p * h * w, h, w, s, i, j);
      }
    }
  }
}

void BlurPoolGradientOp::Run() {
  const Shape& x = Input(0).shape();
  EnforceInputShape(1, BlurPoolShape(def(), x));
  const Tensor& dy = dy_plain_.AsPlain(Input(1), context_);
  const int64_t s = BlurStride(def()), h = x[2], w = x[3], planes = x[0] * x[1];
  const int64_t out_plane = dy.dim(2) * dy.dim(3);
  Tensor* dx = Output(0);
  dx->Resize(x);
  const float* g = dy.data<float>();
  float* d = dx->mutable_data<float>();
#pragma omp parallel for schedule(static) if (planes * h * w >= kMinParallelElements)
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t c = 0; c < w; ++c) {
        d[(p * h + y) * w + c] = blur::InputGradient(g + p * out_plane, h, w, s, y, c);
      }
    }
  }
}

OPERATOR_SCHEMA(BlurPool)
    .NumInputs(1)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{BlurPoolShape(def, in[0].dims)}};
    })
    .Doc(
        "Anti-aliased downsampling (Zhang 2019, 'Making Convolutional Networks Shift-Invariant "
        "Again'; antialiased-cnns' BlurPool with filter size 3): each channel is blurred by "
        "the fixed binomial filter [1, 2, 1] x [1, 2, 1] / 16 over a one-pixel reflection of "
        "its edges, then sampled every `stride` pixels: Y is [N, C, (H - 1) / stride + 1, "
        "(W - 1) / stride + 1]. No parameters. MaxPool of kernel 2, stride 1 before it is "
        "MaxBlurPool.")
    .Input(0, "X", "[N, C, H, W], H, W >= 2, any layout")
    .Output(0, "Y", "blurred and subsampled, plain")
    .Arg("stride", "int >= 1, default 2");
REGISTER_CPU_OPERATOR(BlurPool, BlurPoolOp);

OPERATOR_SCHEMA(BlurPoolGradient)
    .NumInputs(2)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      return std::vector<TensorShape>{{in[0].dims}};
    })
    .Doc(
        "Gradient of BlurPool: dX[y, x] = the sum of dY over the outputs whose window read "
        "(y, x), each times its filter weight.")
    .Input(0, "X", "BlurPool's input (only its shape is read)")
    .Input(1, "dY", "gradient of Y, any layout")
    .Output(0, "dX", "gradient of X, plain")
    .Arg("stride", "as in BlurPool");
REGISTER_CPU_OPERATOR(BlurPoolGradient, BlurPoolGradientOp);

REGISTER_GRADIENT(BlurPool, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{g.Op("BlurPoolGradient", {g.I(0), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(BlurPoolGradient);

}  // namespace crossbow
