#include "operators/spectral_norm_op.h"

#include <algorithm>
#include <cmath>

namespace crossbow {

SpectralNormDims SpectralNormShape(const OperatorDef& def, const Shape& w, const Shape& u,
                                   const Shape& v) {
  CROSSBOW_ENFORCE_VALUE(w.size() >= 2, def.Label(), ": input 0 '", def.inputs[0], "' has shape ",
                         ShapeString(w), ", expected a weight of rank 2 or more");
  SpectralNormDims d;
  d.rows = w[0];
  d.cols = NumElements(w) / std::max<int64_t>(w[0], 1);
  CROSSBOW_ENFORCE_VALUE(u == Shape{d.rows} && v == Shape{d.cols}, def.Label(), ": u '",
                         def.inputs[1], "' ", ShapeString(u), " and v '", def.inputs[2], "' ",
                         ShapeString(v), " do not fit weight '", def.inputs[0], "' ",
                         ShapeString(w), ": expected [", d.rows, "] and [", d.cols, "]");
  d.power_iterations =
      def.Arg<bool>("is_test", false) ? 0 : def.Arg<int64_t>("power_iterations", 1);
  d.epsilon = static_cast<float>(def.Arg<double>("epsilon", 1e-12));
  CROSSBOW_ENFORCE_VALUE(d.power_iterations >= 0 && d.epsilon > 0, def.Label(),
                         ": power_iterations must be >= 0 and epsilon > 0, got ",
                         d.power_iterations, " and ", d.epsilon);
  return d;
}

void EnforceSpectralNormOutputs(const OperatorDef& def, const SpectralNormDims& d) {
  CROSSBOW_ENFORCE_VALUE(d.power_iterations == 0 || def.outputs.size() == 3, def.Label(),
                         ": training updates u and v in place: outputs 1 and 2 must be named");
}

namespace {

float Norm(const float* x, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  return static_cast<float>(std::sqrt(sum));
}

// x /= max(|x|, epsilon), as torch.nn.functional.normalize.
void Normalize(float* x, int64_t n, float epsilon) {
  const float norm = std::max(Norm(x, n), epsilon);
  for (int64_t i = 0; i < n; ++i) x[i] /= norm;
}

// u^T W v / (|u| |v|).
float Sigma(const SpectralNormDims& d, const float* w, const float* u, const float* v) {
  double sum = 0;
  for (int64_t r = 0; r < d.rows; ++r) {
    double row = 0;
    for (int64_t c = 0; c < d.cols; ++c) row += static_cast<double>(w[r * d.cols + c]) * v[c];
    sum += row * u[r];
  }
  return static_cast<float>(sum / (static_cast<double>(Norm(u, d.rows)) * Norm(v, d.cols)));
}

}  // namespace

void SpectralNormOp::Run() {
  const Tensor& w = Input(0);
  const SpectralNormDims d = SpectralNormShape(*this);
  EnforceSpectralNormOutputs(def(), d);
  const float* wd = w.data<float>();
  const float* u = Input(1).data<float>();
  const float* v = Input(2).data<float>();
  if (d.power_iterations > 0) {
    float* un = Output(1)->mutable_data<float>();
    float* vn = Output(2)->mutable_data<float>();
    for (int64_t it = 0; it < d.power_iterations; ++it) {
      for (int64_t c = 0; c < d.cols; ++c) {
        double sum = 0;
        for (int64_t r = 0; r < d.rows; ++r) sum += static_cast<double>(wd[r * d.cols + c]) * un[r];
        vn[c] = static_cast<float>(sum);
      }
      Normalize(vn, d.cols, d.epsilon);
      for (int64_t r = 0; r < d.rows; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < d.cols; ++c) sum += static_cast<double>(wd[r * d.cols + c]) * vn[c];
        un[r] = static_cast<float>(sum);
      }
      Normalize(un, d.rows, d.epsilon);
    }
    u = un;
    v = vn;
  }
  const float sigma = Sigma(d, wd, u, v);
  Tensor* y = Output(0);
  y->Resize(w.shape());
  float* out = y->mutable_data<float>();
  for (int64_t i = 0; i < w.numel(); ++i) out[i] = wd[i] / sigma;
}

void SpectralNormGradientOp::Run() {
  const Tensor& w = Input(0);
  const SpectralNormDims d = SpectralNormShape(*this);
  EnforceInputShape(3, w.shape());
  const float* wd = w.data<float>();
  const float* u = Input(1).data<float>();
  const float* v = Input(2).data<float>();
  const float* dy = dy_plain_.AsPlain(Input(3), context_).data<float>();
  const float sigma = Sigma(d, wd, u, v);
  double dot = 0;
  for (int64_t i = 0; i < w.numel(); ++i) dot += static_cast<double>(dy[i]) * wd[i];
  const double norms = static_cast<double>(Norm(u, d.rows)) * Norm(v, d.cols);
  const auto coef = static_cast<float>(dot / (static_cast<double>(sigma) * sigma * norms));
  Tensor* dw = Output(0);
  dw->Resize(w.shape());
  float* out = dw->mutable_data<float>();
  for (int64_t r = 0; r < d.rows; ++r) {
    for (int64_t c = 0; c < d.cols; ++c) {
      const int64_t i = r * d.cols + c;
      out[i] = dy[i] / sigma - coef * u[r] * v[c];
    }
  }
}

OPERATOR_SCHEMA(SpectralNorm)
    .NumInputs(3)
    .NumOutputs(1, 3)
    .EnforceInplace({{1, 1}, {2, 2}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceSpectralNormOutputs(def, SpectralNormShape(def, in[0].dims, in[1].dims, in[2].dims));
      std::vector<TensorShape> out{in[0], in[1], in[2]};
      out.resize(def.outputs.size());
      return out;
    })
    .Doc(
        "Spectral normalisation (Miyato et al. 2018; torch.nn.utils.spectral_norm): Y = W / "
        "sigma, sigma = u^T W v / (|u| |v|) with W read as [rows, cols] (its first dimension "
        "by the rest). Training first runs power_iterations steps v = normalize(W^T u), u = "
        "normalize(W v), updating u and v in place; test mode uses them as stored.")
    .Input(0, "W", "weight, rank >= 2, plain")
    .Input(1, "u", "[rows]: the left singular vector's estimate")
    .Input(2, "v", "[cols]: the right singular vector's estimate")
    .Output(0, "Y", "W's shape")
    .Output(1, "u", "input 1, updated in place (training)")
    .Output(2, "v", "input 2, updated in place (training)")
    .Arg("power_iterations", "int, default 1: steps per training run")
    .Arg("epsilon", "float, default 1e-12: the smallest norm divided by")
    .Arg("is_test", "int, default 0: no power iteration");
REGISTER_CPU_OPERATOR(SpectralNorm, SpectralNormOp);

OPERATOR_SCHEMA(SpectralNormGradient)
    .NumInputs(4)
    .NumOutputs(1)
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      SpectralNormShape(def, in[0].dims, in[1].dims, in[2].dims);
      return std::vector<TensorShape>{in[0]};
    })
    .Doc(
        "Gradient of SpectralNorm with respect to W, through sigma as well: dW = dY / sigma - "
        "<dY, W> / sigma^2 u v^T / (|u| |v|).")
    .Input(0, "W", "SpectralNorm's W")
    .Input(1, "u", "the u SpectralNorm used (updated in place in training)")
    .Input(2, "v", "the v SpectralNorm used (updated in place in training)")
    .Input(3, "dY", "gradient of Y")
    .Output(0, "dW", "gradient of W");
REGISTER_CPU_OPERATOR(SpectralNormGradient, SpectralNormGradientOp);

// u and v are updated in place, so their blobs hold the vectors the forward pass used.
REGISTER_GRADIENT(SpectralNorm, [](const GradientHelper& g) {
  return std::vector<OperatorDef>{
      MakeOperator("SpectralNormGradient", {g.I(0), g.I(1), g.I(2), g.GO(0)}, {g.GI(0)})};
});
NO_GRADIENT(SpectralNormGradient);

}  // namespace crossbow
