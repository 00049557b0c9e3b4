#include "crossbow/engine/trainer_config.h"

#include <nlohmann/json.hpp>

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {
namespace {

using nlohmann::json;

template <typename T>
void Read(const json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    CROSSBOW_ENFORCE_VALUE(false, "trainer option '", key, "' has the wrong type: ", it->dump());
  }
}

int LearnersPerDevice(const json& j, bool* autotune) {
  auto it = j.find("learners");
  *autotune = it == j.end() || *it == "auto";
  if (*autotune) return 1;
  int k = 0;
  if (it->is_number_integer()) {
    k = it->get<int>();
  } else if (it->is_string()) {
    const std::string s = it->get<std::string>();
    k = s.find_first_not_of("0123456789") == std::string::npos && !s.empty() ? std::stoi(s) : 0;
  }
  CROSSBOW_ENFORCE_VALUE(k >= 1, "learners must be 'auto' or a number >= 1, got ", it->dump());
  return k;
}

void CheckSource(const BatchSource* source, const char* what, const Shape& input_shape) {
  CROSSBOW_ENFORCE_VALUE(source->batch_size() > 0, what, " batch size must be > 0, got ",
                         source->batch_size());
  CROSSBOW_ENFORCE_VALUE(source->EpochSize() > 0, "the ", what, " source is empty");
  CROSSBOW_ENFORCE_VALUE(source->ExampleShape() == input_shape, "the ", what,
                         " source yields examples of shape ", ShapeString(source->ExampleShape()),
                         ", the net takes ", ShapeString(input_shape));
}

}  // namespace

TrainerConfig ParseTrainerConfig(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  CROSSBOW_ENFORCE_VALUE(j.is_object(), "trainer options must be a JSON object");
  TrainerConfig c;
  EngineOptions& e = c.engine;
  TrainerOptions& t = c.trainer;
  std::string devices = "cpu";
  Read(j, "sync", &e.sync);
  CheckSynchroniserName(e.sync);
  Read(j, "devices", &devices);
  e.devices = ParseDevices(devices);
  e.learners_per_device = LearnersPerDevice(j, &t.autotune);
  Read(j, "sync_period", &e.sync_period);
  Read(j, "alpha", &e.alpha);
  Read(j, "central_momentum", &e.central_momentum);
  Read(j, "central_momentum_type", &e.central_momentum_type);
  Read(j, "outer_lr", &e.outer_lr);
  Read(j, "outer_momentum", &e.outer_momentum);
  Read(j, "threads_per_learner", &e.threads_per_learner);
  Read(j, "seed", &e.seed);
  Read(j, "skip_nan", &e.skip_nan);
  double timeout_s = e.collective_timeout_ms / 1000.0;
  Read(j, "collective_timeout", &timeout_s);
  CROSSBOW_ENFORCE_VALUE(timeout_s > 0 && timeout_s < 2e6, "collective_timeout must be in (0, ",
                         "2e6) seconds, got ", timeout_s);
  e.collective_timeout_ms = static_cast<int>(timeout_s * 1000);
  Read(j, "epochs", &t.epochs);
  Read(j, "iterations", &t.iterations);
  Read(j, "time_limit", &t.time_limit_s);
  Read(j, "target_accuracy", &t.target_accuracy);
  Read(j, "lr", &t.lr.base_lr);
  Read(j, "lr_policy", &t.lr.policy);
  Read(j, "gamma", &t.lr.gamma);
  Read(j, "power", &t.lr.power);
  Read(j, "step_size", &t.lr.step_size);
  Read(j, "steps", &t.lr.steps);
  Read(j, "warmup", &t.lr.warmup);
  Read(j, "warmup_start", &t.lr.warmup_start);
  Read(j, "eval_every", &t.eval_every);
  Read(j, "autotune_threshold", &t.autotune_threshold);
  Read(j, "checkpoint_dir", &t.checkpoint_dir);
  Read(j, "checkpoint_every_epochs", &t.checkpoint_every_epochs);
  Read(j, "checkpoint_every_minutes", &t.checkpoint_every_minutes);
  Read(j, "resume", &t.resume);
  Read(j, "metrics", &t.metrics_path);
  Read(j, "log_every", &t.log_every);
  Read(j, "progress", &t.progress);
  Read(j, "stall_timeout", &t.stall_timeout_s);
  return c;
}

void CheckTrainerOptions(const TrainerOptions& options, const Shape& input_shape,
                         const BatchSource* train, const BatchSource* test) {
  const TrainerOptions& o = options;
  CROSSBOW_ENFORCE_VALUE(train != nullptr, "the trainer needs a training source");
  CheckSource(train, "training", input_shape);
  if (test != nullptr) CheckSource(test, "test", input_shape);
  CROSSBOW_ENFORCE_VALUE(o.epochs >= 0 && o.iterations >= 0 && o.time_limit_s >= 0,
                         "epochs, iterations and time limit must be >= 0");
  CROSSBOW_ENFORCE_VALUE(o.epochs > 0 || o.iterations > 0 || o.time_limit_s > 0,
                         "set epochs, iterations or a time limit: training would never stop");
  CROSSBOW_ENFORCE_VALUE(o.target_accuracy >= 0 && o.target_accuracy <= 1,
                         "target accuracy must be in [0, 1], got ", o.target_accuracy);
  CROSSBOW_ENFORCE_VALUE(o.target_accuracy == 0 || test != nullptr,
                         "a target accuracy needs a test source");
  CROSSBOW_ENFORCE_VALUE(o.eval_every >= 0, "eval_every must be >= 0, got ", o.eval_every);
  CROSSBOW_ENFORCE_VALUE(o.log_every > 0, "log_every must be > 0, got ", o.log_every);
  CROSSBOW_ENFORCE_VALUE(o.stall_timeout_s >= 0, "stall_timeout must be >= 0 seconds, got ",
                         o.stall_timeout_s);
  CROSSBOW_ENFORCE_VALUE(o.checkpoint_every_epochs >= 0 && o.checkpoint_every_minutes >= 0,
                         "checkpoint intervals must be >= 0");
  CROSSBOW_ENFORCE_VALUE(!o.resume || !o.checkpoint_dir.empty(),
                         "resume needs a checkpoint directory");
  CROSSBOW_ENFORCE_VALUE(o.autotune_threshold > 0, "the autotuner threshold must be > 0, got ",
                         o.autotune_threshold);
}

}  // namespace crossbow
