#include "crossbow/engine/learner_spec.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "crossbow/core/names.h"
#include "crossbow/core/precision.h"

namespace crossbow {

std::vector<std::string> SolverTypes() { return {"sgd", "adamw", "radam"}; }
std::vector<std::string> RadamEpsPlacements() { return {"raw", "corrected"}; }

LearnerSpec LearnerSpec::FromJson(const std::string& text) {
  using nlohmann::json;
  try {
    json j = json::parse(text);
    LearnerSpec spec;
    spec.name = j.value("name", std::string("model"));
    spec.source = j.value("source", std::string());
    spec.init_net = ParseNet(j.at("init_net").dump());
    spec.net = ParseNet(j.at("net").dump());
    spec.input = j.value("input", spec.input);
    spec.label = j.value("label", spec.label);
    spec.loss = j.value("loss", spec.loss);
    spec.output = j.value("output", spec.output);
    spec.input_shape = j.at("input_shape").get<Shape>();
    spec.accuracy = j.value("accuracy", std::vector<std::string>{});
    spec.params = j.at("params").get<std::vector<std::string>>();
    spec.state = j.value("state", std::vector<std::string>{});
    if (j.contains("solver")) {
      const json& s = j["solver"];
      spec.solver.lr = s.value("lr", spec.solver.lr);
      spec.solver.momentum = s.value("momentum", spec.solver.momentum);
      spec.solver.weight_decay = s.value("weight_decay", spec.solver.weight_decay);
      spec.solver.nesterov = s.value("nesterov", spec.solver.nesterov);
      spec.solver.bias_decay = s.value("bias_decay", spec.solver.bias_decay);
      SolverConfig& o = spec.solver;
      o.type = s.value("type", o.type);
      o.momentum_convention = s.value("momentum_convention", o.momentum_convention);
      if (s.contains("betas"))
        std::tie(o.beta1, o.beta2) = s["betas"].get<std::pair<double, double>>();
      o.eps = s.value("eps", o.eps);
      o.radam_eps = s.value("radam_eps", o.radam_eps);
      o.lookahead_k = s.value("lookahead_k", o.lookahead_k);
      o.lookahead_alpha = s.value("lookahead_alpha", o.lookahead_alpha);
      const std::vector<std::string> types = SolverTypes();
      CROSSBOW_ENFORCE_VALUE(std::count(types.begin(), types.end(), o.type) == 1,
                             "learner spec: unknown solver type '", o.type, "'; expected ",
                             JoinNames(types), DidYouMean(o.type, types));
      const std::vector<std::string> placements = RadamEpsPlacements();
      CROSSBOW_ENFORCE_VALUE(std::count(placements.begin(), placements.end(), o.radam_eps) == 1,
                             "learner spec: unknown radam_eps '", o.radam_eps, "'; expected ",
                             JoinNames(placements));
      CROSSBOW_ENFORCE_VALUE(o.type == "radam" || !s.contains("radam_eps"),
                             "learner spec: radam_eps is an option of solver type radam, not ",
                             o.type);
      const bool sgd = o.type == "sgd";
      CROSSBOW_ENFORCE_VALUE(sgd || (!o.nesterov && o.momentum_convention == "caffe2"),
                             "learner spec: nesterov and momentum_convention are options of "
                             "solver type sgd, not ",
                             o.type);
      CROSSBOW_ENFORCE_VALUE(!sgd || (!s.contains("betas") && !s.contains("eps")),
                             "learner spec: betas and eps are options of solver types adamw and "
                             "radam, not sgd");
      CROSSBOW_ENFORCE_VALUE(
          o.momentum_convention == "caffe2" || o.momentum_convention == "pytorch",
          "learner spec: solver momentum_convention must be caffe2 or pytorch, got '",
          o.momentum_convention, "'");
    }
    spec.seed = j.value("seed", uint64_t{0});
    spec.threads = j.value("threads", 1);
    spec.device = ParseDevice(j.value("device", std::string("cpu")));
    spec.precision = ParsePrecision(j.value("precision", std::string("fp32")));
    spec.cuda_graphs = j.value("cuda_graphs", spec.cuda_graphs);
    spec.plan_memory = j.value("plan_memory", spec.plan_memory);
    return spec;
  } catch (const json::exception& e) {
    throw ValueError(detail::Concat("malformed learner spec: ", e.what()));
  }
}

}  // namespace crossbow
