#include "operators/filler_op.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace crossbow {

Shape FillerShapeArg(const OperatorDef& def) {
  Shape shape = def.RequiredArg<std::vector<int64_t>>("shape");
  CROSSBOW_ENFORCE_VALUE(std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d >= 0; }),
                         def.Label(), ": argument 'shape' ", ShapeString(shape),
                         " has a negative dimension");
  return shape;
}

UniformRange UniformFillArgs(const OperatorDef& def) {
  const UniformRange range{def.Arg<float>("min", -1.f), def.Arg<float>("max", 1.f)};
  CROSSBOW_ENFORCE_VALUE(range.min < range.max, def.Label(), ": argument 'min' (", range.min,
                         ") must be below 'max' (", range.max, ")");
  return range;
}

NormalParams GaussianFillArgs(const OperatorDef& def) {
  const NormalParams normal{def.Arg<float>("mean", 0.f), def.Arg<float>("std", 1.f)};
  CROSSBOW_ENFORCE_VALUE(normal.std > 0.f, def.Label(), ": argument 'std' must be positive, got ",
                         normal.std);
  return normal;
}

bool MSRAFanOut(const OperatorDef& def) {
  const std::string mode = def.Arg<std::string>("mode", "fan_in");
  CROSSBOW_ENFORCE_VALUE(mode == "fan_in" || mode == "fan_out", def.Label(),
                         ": argument 'mode' must be 'fan_in' or 'fan_out', got '", mode, "'");
  return mode == "fan_out";
}

namespace {

std::vector<TensorShape> InferFillerShape(const OperatorDef& def,
                                          const std::vector<TensorShape>& in) {
  return {{in.empty() ? FillerShapeArg(def) : in[0].dims}};
}

constexpr char kShapeDoc[] = "list of ints, the output's shape (required without an input)";
constexpr char kOutputDoc[] = "the filled tensor, plain float32";

}  // namespace

int64_t FanIn(const Shape& shape) {
  return shape.empty() ? 1 : NumElements(Shape(shape.begin() + 1, shape.end()));
}

int64_t FanOut(const Shape& shape) {
  if (shape.size() < 2) return NumElements(shape);
  return shape[0] * NumElements(Shape(shape.begin() + 2, shape.end()));
}

FillerOp::FillerOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context) {
  if (InputSize() == 0) shape_ = FillerShapeArg(def);
}

void FillerOp::Run() {
  Tensor* out = Output(0);
  out->Resize(InputSize() == 0 ? shape_ : Input(0).shape());
  // A zero fan implies no elements, so the fan-based fillers never divide by zero.
  if (out->numel() > 0) Fill(out->shape(), out->mutable_data<float>());
}

ConstantFillOp::ConstantFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : FillerOp(def, ws, context), value_(def.Arg<float>("value", 0.f)) {}

void ConstantFillOp::Fill(const Shape& shape, float* out) {
  std::fill_n(out, NumElements(shape), value_);
}

UniformFillOp::UniformFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : FillerOp(def, ws, context), range_(UniformFillArgs(def)) {}

void UniformFillOp::Fill(const Shape& shape, float* out) {
  std::uniform_real_distribution<float> dist(range_.min, range_.max);
  std::generate_n(out, NumElements(shape), [&] { return dist(context_->rng()); });
}

GaussianFillOp::GaussianFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : FillerOp(def, ws, context), normal_(GaussianFillArgs(def)) {}

void GaussianFillOp::Fill(const Shape& shape, float* out) {
  std::normal_distribution<float> dist(normal_.mean, normal_.std);
  std::generate_n(out, NumElements(shape), [&] { return dist(context_->rng()); });
}

void XavierFillOp::Fill(const Shape& shape, float* out) {
  const float scale = std::sqrt(3.f / static_cast<float>(FanIn(shape)));
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::generate_n(out, NumElements(shape), [&] { return dist(context_->rng()); });
}

MSRAFillOp::MSRAFillOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : FillerOp(def, ws, context), fan_out_(MSRAFanOut(def)) {}

void MSRAFillOp::Fill(const Shape& shape, float* out) {
  const int64_t fan = fan_out_ ? FanOut(shape) : FanIn(shape);
  std::normal_distribution<float> dist(0.f, std::sqrt(2.f / static_cast<float>(fan)));
  std::generate_n(out, NumElements(shape), [&] { return dist(context_->rng()); });
}

OPERATOR_SCHEMA(ConstantFill)
    .NumInputs(0, 1)
    .NumOutputs(1)
    .ShapeInference(InferFillerShape)
    .Doc("Fills the output with one value; with an input, the output takes the input's shape.")
    .Input(0, "X", "optional: any tensor whose shape the output copies")
    .Output(0, "Y", kOutputDoc)
    .Arg("shape", kShapeDoc)
    .Arg("value", "float, default 0");
REGISTER_CPU_OPERATOR(ConstantFill, ConstantFillOp);

OPERATOR_SCHEMA(UniformFill)
    .NumInputs(0)
    .NumOutputs(1)
    .ShapeInference(InferFillerShape)
    .Doc("Fills the output with uniform random numbers in [min, max).")
    .Output(0, "Y", kOutputDoc)
    .Arg("shape", kShapeDoc)
    .Arg("min", "float, default -1")
    .Arg("max", "float, default 1");
REGISTER_CPU_OPERATOR(UniformFill, UniformFillOp);

OPERATOR_SCHEMA(GaussianFill)
    .NumInputs(0)
    .NumOutputs(1)
    .ShapeInference(InferFillerShape)
    .Doc("Fills the output with normal random numbers.")
    .Output(0, "Y", kOutputDoc)
    .Arg("shape", kShapeDoc)
    .Arg("mean", "float, default 0")
    .Arg("std", "float, default 1, positive");
REGISTER_CPU_OPERATOR(GaussianFill, GaussianFillOp);

OPERATOR_SCHEMA(XavierFill)
    .NumInputs(0)
    .NumOutputs(1)
    .ShapeInference(InferFillerShape)
    .Doc(
        "Fills a weight with uniform random numbers in +-sqrt(3 / fan_in), "
        "fan_in = prod(shape[1:]).")
    .Output(0, "Y", kOutputDoc)
    .Arg("shape", kShapeDoc);
REGISTER_CPU_OPERATOR(XavierFill, XavierFillOp);

OPERATOR_SCHEMA(MSRAFill)
    .NumInputs(0)
    .NumOutputs(1)
    .ShapeInference(InferFillerShape)
    .Doc(
        "Fills a weight with normal random numbers of std sqrt(2 / fan) (He et al. 2015); "
        "fan_in = prod(shape[1:]), fan_out = shape[0] * prod(shape[2:]).")
    .Output(0, "Y", kOutputDoc)
    .Arg("shape", kShapeDoc)
    .Arg("mode", "'fan_in' (default) or 'fan_out'");
REGISTER_CPU_OPERATOR(MSRAFill, MSRAFillOp);

NO_GRADIENT(ConstantFill);
NO_GRADIENT(UniformFill);
NO_GRADIENT(GaussianFill);
NO_GRADIENT(XavierFill);
NO_GRADIENT(MSRAFill);

}  // namespace crossbow
