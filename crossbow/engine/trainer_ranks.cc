#include "crossbow/engine/trainer_ranks.h"

#include <charconv>
#include <functional>

#include "crossbow/core/serialize.h"

namespace crossbow {
namespace {

// Shortest text that reads back as the same number, so that equal settings compare equal.
std::string Text(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), value).ptr;
  return std::string(text, end);
}
std::string Text(int64_t value) { return std::to_string(value); }
std::string Text(int value) { return std::to_string(value); }
std::string Text(uint64_t value) { return std::to_string(value); }
std::string Text(bool value) { return value ? "true" : "false"; }

std::string Join(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ",") + Text(v);
  return out;
}

}  // namespace

RankSettings TrainerSettings(const LearnerSpec& spec, const EngineOptions& e,
                             const TrainerOptions& o, const BatchSource& train,
                             const BatchSource* test, Engine& engine, int64_t resume_iteration) {
  std::string shapes;
  int64_t parameters = 0;
  for (const auto& [name, tensor] : engine.StateTensors()) {
    if (name.rfind("z/", 0) != 0) continue;
    shapes += name + ShapeString(tensor->shape()) + ";";
    parameters += tensor->numel();
  }
  const LrPolicyOptions& lr = o.lr;
  return {
      {"net", spec.name},
      {"parameters", Text(parameters)},
      {"parameter shapes (hash)", Text(std::hash<std::string>()(shapes))},
      {"example shape", ShapeString(spec.input_shape)},
      {"sync", e.sync + " every " + Text(e.sync_period)},
      {"devices", Text(e.devices.size())},
      {"learners per device", o.autotune ? "auto" : Text(e.learners_per_device)},
      {"threads per learner", Text(e.threads_per_learner)},
      {"alpha", Text(e.alpha)},
      {"central momentum", Text(e.central_momentum) + " " + e.central_momentum_type},
      {"outer lr, momentum", Text(e.outer_lr) + ", " + Text(e.outer_momentum)},
      {"momentum", Text(spec.solver.momentum)},
      {"weight decay", Text(spec.solver.weight_decay)},
      {"seed", Text(spec.seed) + "/" + Text(e.seed)},
      {"skip nan", Text(e.skip_nan)},
      {"collective timeout ms", Text(e.collective_timeout_ms)},
      {"batch size", Text(train.batch_size())},
      {"training records", Text(train.EpochSize())},
      {"test records", test ? Text(test->EpochSize()) : "none"},
      {"lr", Text(lr.base_lr)},
      {"lr policy", lr.policy + " gamma " + Text(lr.gamma) + " power " + Text(lr.power) + " step " +
                        Text(lr.step_size) + " steps " + Join(lr.steps) + " max " + Text(lr.max) +
                        " warmup " + Text(lr.warmup) + " from " + Text(lr.warmup_start)},
      {"stop", "epochs " + Text(o.epochs) + " iterations " + Text(o.iterations) + " time " +
                   Text(o.time_limit_s) + " accuracy " + Text(o.target_accuracy)},
      {"eval every", Text(o.eval_every)},
      {"log every", Text(o.log_every)},
      {"checkpoints", o.checkpoint_dir + " every " + Text(o.checkpoint_every_epochs) + " epochs, " +
                          Text(o.checkpoint_every_minutes) + " minutes"},
      {"resumes from iteration", Text(resume_iteration)},
  };
}

std::vector<std::pair<std::string, const Tensor*>> GatherStateTensors(
    ProcessGroup& group, const std::vector<std::pair<std::string, const Tensor*>>& local,
    std::vector<std::map<std::string, Tensor>>* received, std::chrono::milliseconds timeout) {
  std::vector<std::pair<std::string, const Tensor*>> learners;
  for (const auto& entry : local) {
    if (entry.first.rfind("learner", 0) == 0) learners.push_back(entry);
  }
  const std::vector<std::string> parts =
      group.Gather(group.rank() == 0 ? std::string() : PackTensors(learners), 0, timeout);
  if (group.rank() != 0) return {};
  std::vector<std::pair<std::string, const Tensor*>> all = local;
  received->clear();
  received->reserve(parts.size());
  for (size_t r = 1; r < parts.size(); ++r) {
    received->push_back(UnpackTensors(parts[r], "checkpoint tensors of rank " + Text(r)));
    for (const auto& [name, tensor] : received->back()) all.emplace_back(name, &tensor);
  }
  return all;
}

}  // namespace crossbow
