#include "crossbow/engine/optimizer_ops.h"

#include <algorithm>

#include "crossbow/core/names.h"

namespace crossbow {

OptimizerOps MakeOptimizerOps(const SolverConfig& solver, const std::vector<std::string>& params,
                              const std::map<std::string, std::string>& gradients,
                              const std::string& lr, const std::string& momentum,
                              const std::function<bool(const std::string&)>& decayed) {
  using Start = OptimizerStateBlob::Start;
  const std::vector<std::string> types = SolverTypes();
  CROSSBOW_ENFORCE_VALUE(std::count(types.begin(), types.end(), solver.type) == 1,
                         "unknown solver type '", solver.type, "'; expected ", JoinNames(types));
  OptimizerOps out;
  for (const auto& p : params) {
    const double weight_decay = decayed(p) ? solver.weight_decay : 0.0;
    if (solver.type == "sgd") {
      out.state.push_back({p + "_momentum", p, Start::kZeros});
      out.ops.push_back(MakeOperator("MomentumSGD", {p, gradients.at(p), p + "_momentum", lr},
                                     {p, p + "_momentum"},
                                     {{"momentum", solver.momentum},
                                      {"weight_decay", weight_decay},
                                      {"nesterov", int64_t{solver.nesterov}},
                                      {"convention", solver.momentum_convention}}));
    } else {
      const std::string m = p + "_exp_avg", v = p + "_exp_avg_sq", step = p + "_step";
      out.state.insert(out.state.end(),
                       {{m, p, Start::kZeros}, {v, p, Start::kZeros}, {step, p, Start::kCount}});
      out.ops.push_back(
          MakeOperator("AdamW", {p, gradients.at(p), m, v, step, lr, momentum}, {p, m, v, step},
                       {{"beta1", solver.beta1},
                        {"beta2", solver.beta2},
                        {"eps", solver.eps},
                        {"weight_decay", weight_decay},
                        {"rectify", int64_t{solver.type == "radam"}},
                        {"corrected_eps", int64_t{solver.radam_eps == "corrected"}}}));
    }
    if (solver.lookahead_k > 0) {
      const std::string slow = p + "_slow", step = p + "_lookahead_step";
      out.state.insert(out.state.end(), {{slow, p, Start::kParam}, {step, p, Start::kCount}});
      out.ops.push_back(
          MakeOperator("Lookahead", {p, slow, step}, {p, slow, step},
                       {{"k", solver.lookahead_k}, {"alpha", solver.lookahead_alpha}}));
    }
  }
  return out;
}

}  // namespace crossbow
