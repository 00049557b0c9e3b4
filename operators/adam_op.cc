#include "operators/adam_op.h"

#include "operators/adam_step.h"

namespace crossbow {

AdamArgs ReadAdamArgs(const OperatorDef& def) {
  const AdamArgs a{def.Arg<double>("beta1", 0.9),   def.Arg<double>("beta2", 0.999),
                   def.Arg<double>("eps", 1e-8),    def.Arg<double>("weight_decay", 0.0),
                   def.Arg<bool>("rectify", false), def.Arg<bool>("corrected_eps", false)};
  for (const auto& [name, beta] : {std::pair{"beta1", a.beta1}, std::pair{"beta2", a.beta2}}) {
    CROSSBOW_ENFORCE_VALUE(beta >= 0 && beta < 1, def.Label(), ": argument '", name,
                           "' must be in [0, 1), got ", beta);
  }
  CROSSBOW_ENFORCE_VALUE(a.eps > 0, def.Label(), ": argument 'eps' must be > 0, got ", a.eps);
  CROSSBOW_ENFORCE_VALUE(a.weight_decay >= 0, def.Label(),
                         ": argument 'weight_decay' must be >= 0, got ", a.weight_decay);
  return a;
}

AdamWOp::AdamWOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), args_(ReadAdamArgs(def)) {}

void AdamWOp::Run() {
  EnforcePlainInputs(*this, InputSize());
  EnforceAdamInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
  const double beta1 = InputSize() == 7 ? Input(6).data<float>()[0] : args_.beta1;
  CROSSBOW_ENFORCE_VALUE(beta1 >= 0 && beta1 < 1, def().Label(), ": input 6 '", def().inputs[6],
                         "' (beta1) must be in [0, 1), got ", beta1);
  // Outputs 0-3 are inputs 0, 2, 3 and 4 (enforced in place).
  float* step = Output(3)->mutable_data<float>();
  const float t = *step + 1.f;
  const AdamCoefficients k =
      AdamCoefficientsFor(t, Input(5).data<float>()[0], beta1, args_.beta2, args_.eps,
                          args_.weight_decay, args_.rectify, args_.corrected_eps);
  float* param = Output(0)->mutable_data<float>();
  float* m = Output(1)->mutable_data<float>();
  float* v = Output(2)->mutable_data<float>();
  const float* grad = Input(1).data<float>();
  const int64_t n = Input(0).numel();
  for (int64_t i = 0; i < n; ++i) AdamElement(k, grad[i], param + i, m + i, v + i);
  *step = t;
}

OPERATOR_SCHEMA(AdamW)
    .NumInputs(6, 7)
    .NumOutputs(4)
    .EnforceInplace({{0, 0}, {2, 1}, {3, 2}, {4, 3}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceAdamInputs(
          def, [&](int i) -> const Shape& { return in[i].dims; },
          [&](int i) { return in[i].dtype; });
      return std::vector<TensorShape>{in[0], in[2], in[3], in[4]};
    })
    .Doc(
        "One AdamW step (torch.optim.AdamW), in place, or with rectify one RAdam step "
        "(torch.optim.RAdam, decoupled_weight_decay=True): param *= 1 - lr * weight_decay; "
        "m, v: the moving averages of grad and grad^2; the step from the bias-corrected "
        "averages. Step counts the steps taken (PyTorch's state['step']).")
    .Input(0, "param", "plain float parameter, updated in place (output 0)")
    .Input(1, "grad", "plain float gradient, param's shape")
    .Input(2, "exp_avg", "plain float first moment, param's shape, in place (output 1)")
    .Input(3, "exp_avg_sq", "plain float second moment, param's shape, in place (output 2)")
    .Input(4, "step", "steps taken, one float, incremented in place (output 3)")
    .Input(5, "lr", "learning rate, one float ([] or [1])")
    .Input(6, "beta1", "optional: beta1 of this step, one float, in place of the argument")
    .Output(0, "param", "the updated parameter")
    .Output(1, "exp_avg", "the updated first moment")
    .Output(2, "exp_avg_sq", "the updated second moment")
    .Output(3, "step", "the step count, plus one")
    .Arg("beta1", "float, default 0.9: decay of the first moment")
    .Arg("beta2", "float, default 0.999: decay of the second moment")
    .Arg("eps", "float, default 1e-8")
    .Arg("weight_decay", "float, default 0: decoupled (param *= 1 - lr * weight_decay)")
    .Arg("rectify", "int, default 0: 1 for RAdam's rectification (Liu et al. 2020)")
    .Arg("corrected_eps",
         "int, default 0: 1 adds RAdam's eps to sqrt(v / (1 - beta2^t)), as AdamW's (fastai's "
         "RAdam), not to sqrt(v) (PyTorch's)");
REGISTER_CPU_OPERATOR(AdamW, AdamWOp);
NO_GRADIENT(AdamW);

}  // namespace crossbow
