#include "operators/lookahead_op.h"

namespace crossbow {

LookaheadArgs ReadLookaheadArgs(const OperatorDef& def) {
  const LookaheadArgs a{def.Arg<int64_t>("k", 5), def.Arg<float>("alpha", 0.5f)};
  CROSSBOW_ENFORCE_VALUE(a.k >= 1, def.Label(), ": argument 'k' must be >= 1, got ", a.k);
  CROSSBOW_ENFORCE_VALUE(a.alpha > 0 && a.alpha <= 1, def.Label(),
                         ": argument 'alpha' must be in (0, 1], got ", a.alpha);
  return a;
}

LookaheadOp::LookaheadOp(const OperatorDef& def, Workspace* ws, CPUContext* context)
    : Operator(def, ws, context), args_(ReadLookaheadArgs(def)) {}

void LookaheadOp::Run() {
  EnforcePlainInputs(*this, 3);
  EnforceLookaheadInputs(def(), InputShapeOf{*this}, InputTypeOf{*this});
  // Outputs 0-2 are inputs 0-2 (enforced in place).
  float* step = Output(2)->mutable_data<float>();
  *step += 1.f;
  if (static_cast<int64_t>(*step) % args_.k != 0) return;
  float* param = Output(0)->mutable_data<float>();
  float* slow = Output(1)->mutable_data<float>();
  const int64_t n = Input(0).numel();
  for (int64_t i = 0; i < n; ++i) {
    slow[i] += args_.alpha * (param[i] - slow[i]);
    param[i] = slow[i];
  }
}

OPERATOR_SCHEMA(Lookahead)
    .NumInputs(3)
    .NumOutputs(3)
    .EnforceInplace({{0, 0}, {1, 1}, {2, 2}})
    .ShapeInference([](const OperatorDef& def, const std::vector<TensorShape>& in) {
      EnforceLookaheadInputs(
          def, [&](int i) -> const Shape& { return in[i].dims; },
          [&](int i) { return in[i].dtype; });
      return in;
    })
    .Doc(
        "Lookahead (Zhang et al. 2019) after an optimiser's step, in place: step += 1; every k "
        "steps slow += alpha * (param - slow) and param = slow.")
    .Input(0, "param", "plain float parameter (the fast weights), in place (output 0)")
    .Input(1, "slow", "plain float slow weights, param's shape, in place (output 1)")
    .Input(2, "step", "the fast steps taken, one float, incremented in place (output 2)")
    .Output(0, "param", "the parameter, the slow weights after every k-th step")
    .Output(1, "slow", "the slow weights")
    .Output(2, "step", "the step count, plus one")
    .Arg("k", "int, default 5: fast steps per slow step")
    .Arg("alpha", "float, default 0.5: the slow step's share of the way to the fast weights");
REGISTER_CPU_OPERATOR(Lookahead, LookaheadOp);
NO_GRADIENT(Lookahead);

}  // namespace crossbow
