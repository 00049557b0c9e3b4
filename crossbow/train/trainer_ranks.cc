#include "crossbow/train/trainer_ranks.h"

#include <charconv>
#include <functional>

#include "crossbow/core/serialize.h"
#include "crossbow/train/trainer_options.h"

namespace crossbow {
namespace {

// Shortest text that reads back as the same number, so that equal settings compare equal.
std::string Text(double value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof(text), value).ptr;
  return std::string(text, end);
}
std::string Text(int64_t value) { return std::to_string(value); }
std::string Text(uint64_t value) { return std::to_string(value); }

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
  RankSettings settings = {
      {"net", spec.name},
      {"parameters", Text(parameters)},
      {"parameter shapes (hash)", Text(std::hash<std::string>()(shapes))},
      {"example shape", ShapeString(spec.input_shape)},
      {"devices", Text(e.devices.size())},
      {"momentum", Text(spec.solver.momentum)},
      {"weight decay", Text(spec.solver.weight_decay)},
      {"optimizer", spec.solver.type + (spec.solver.lookahead_k > 0 ? " + lookahead" : "")},
      {"initialisation seed", Text(spec.seed)},
      {"batch size", Text(train.batch_size())},
      {"training records", Text(train.EpochSize())},
      {"test records", test ? Text(test->EpochSize()) : "none"},
      {"training data", train.DataIdentity()},
      {"test data", test ? test->DataIdentity() : "none"},
      {"lr policy's end", Text(o.lr.max)},
      {"resumes from iteration", Text(resume_iteration)},
  };
  for (auto& option : RankComparedOptions(e, o)) settings.push_back(std::move(option));
  return settings;
}

std::vector<std::pair<std::string, const Tensor*>> GatherStateTensors(
    ProcessGroup& group, const std::vector<std::pair<std::string, const Tensor*>>& local,
    int64_t iteration, std::vector<std::map<std::string, Tensor>>* received,
    std::chrono::milliseconds timeout) {
  constexpr const char* kIteration = "checkpoint/iteration";
  Tensor at({1}, DataType::kInt64);
  *at.mutable_data<int64_t>() = iteration;
  std::vector<std::pair<std::string, const Tensor*>> learners = {{kIteration, &at}};
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
    const auto theirs = received->back().find(kIteration);
    CROSSBOW_ENFORCE(theirs != received->back().end() && theirs->second.numel() == 1, "rank ", r,
                     " sent checkpoint tensors without their iteration");
    const int64_t their_iteration = *theirs->second.data<int64_t>();
    CROSSBOW_ENFORCE(their_iteration == iteration, "rank ", r, " is at iteration ", their_iteration,
                     ", rank 0 at ", iteration,
                     ": no checkpoint written (it would mix iterations)");
    received->back().erase(theirs);
    for (const auto& [name, tensor] : received->back()) all.emplace_back(name, &tensor);
  }
  return all;
}

}  // namespace crossbow
