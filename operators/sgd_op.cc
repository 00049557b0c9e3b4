#include "operators/sgd_op.h"

namespace crossbow {

namespace {

// Branch-free so that it vectorises.
void MomentumStep(float* __restrict param, float* __restrict velocity, const float* __restrict grad,
                  int64_t n, float momentum, float weight_decay, MomentumCoefficients k) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i] + weight_decay * param[i];
    const float v = momentum * velocity[i] + k.c * g;
    velocity[i] = v;
    param[i] += k.s * (k.a * v + k.b * g);
  }
}

}  // namespace

bool IsPyTorchConvention(const OperatorDef& def) {
  const std::string convention = def.Arg<std::string>("convention", "caffe2");
  CROSSBOW_ENFORCE_VALUE(convention == "caffe2" || convention == "pytorch", def.Label(),
                         ": argument 'convention' must be caffe2 or pytorch, got '", convention,
                         "'");
  return convention == "pytorch";
}

MomentumSGDOp::MomentumSGDOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context),
      momentum_(def.Arg<float>("momentum", 0.9f)),
      weight_decay_(def.Arg<float>("weight_decay", 0.f)),
      nesterov_(def.Arg<bool>("nesterov", false)),
      pytorch_(IsPyTorchConvention(def)) {}

void MomentumSGDOp::Run() {
  EnforcePlainInputs(*this, 4);
  EnforceSGDInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
  const float lr = Input(3).data<float>()[0];
  // Output 0 is input 0 and output 1 is input 2 (enforced in place).
  MomentumStep(Output(0)->mutable_data<float>(), Output(1)->mutable_data<float>(),
               Input(1).data<float>(), Input(0).numel(), momentum_, weight_decay_,
               MomentumCoefficientsFor(pytorch_, nesterov_, momentum_, lr));
}

OPERATOR_SCHEMA(MomentumSGD)
    .NumInputs(4)
    .NumOutputs(2)
    .EnforceInplace({{0, 0}, {2, 1}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceSGDInputs(
          def, [&](int i) -> const Shape& { return in[i].dims; },
          [&](int i) { return in[i].dtype; });
      return std::vector<TensorShape>{in[0], in[2]};
    })
    .Doc(
        "One momentum SGD step, in place: g = grad + weight_decay * param; caffe2 convention: "
        "v = momentum * v - lr * g; param += v, or with nesterov param += momentum * v - lr * g; "
        "pytorch convention (torch.optim.SGD): v = momentum * v + g; param -= lr * v, or with "
        "nesterov param -= lr * (g + momentum * v).")
    .Input(0, "param", "plain float parameter, updated in place (output 0)")
    .Input(1, "grad", "plain float gradient, param's shape")
    .Input(2, "momentum", "plain float velocity, param's shape, updated in place (output 1)")
    .Input(3, "lr", "learning rate, one float ([] or [1])")
    .Output(0, "param", "the updated parameter")
    .Output(1, "momentum", "the updated velocity")
    .Arg("momentum", "float, default 0.9")
    .Arg("weight_decay", "float, default 0: L2 penalty added to the gradient")
    .Arg("nesterov", "int, default 0: 1 for Nesterov momentum")
    .Arg("convention", "string, default caffe2: caffe2 (v holds -lr g) or pytorch (v holds g)");
REGISTER_CPU_OPERATOR(MomentumSGD, MomentumSGDOp);
NO_GRADIENT(MomentumSGD);

}  // namespace crossbow
