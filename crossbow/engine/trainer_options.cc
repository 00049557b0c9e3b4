// The table of training options and the JSON parser made from it: every key once, with how
// its default is found and how its value is set; a key the table lacks is an error.
#include "crossbow/engine/trainer_options.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "crossbow/core/names.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "crossbow/engine/trainer_config.h"

namespace crossbow {
namespace {

using nlohmann::json;

struct Entry {
  const char* name;
  std::function<json(const TrainerConfig&)> get;         // the default, of TrainerConfig{}
  std::function<void(const json&, TrainerConfig*)> set;  // null: the Python side's alone
};

template <typename T>
T As(const json& value, const char* key) {
  try {
    return value.get<T>();
  } catch (const json::exception&) {
    throw ValueError(
        detail::Concat("trainer option '", key, "' has the wrong type: ", value.dump()));
  }
}

// A field of TrainerConfig, its default the field's; UNSET ones default to null (off).
#define CROSSBOW_FIELD(key, member)                                                          \
  Entry {                                                                                    \
    key, [](const TrainerConfig& c) { return json(c.member); },                              \
        [](const json& v, TrainerConfig* c) { c->member = As<decltype(c->member)>(v, key); } \
  }
#define CROSSBOW_UNSET(key, member)                                                          \
  Entry {                                                                                    \
    key, [](const TrainerConfig&) { return json(nullptr); },                                 \
        [](const json& v, TrainerConfig* c) { c->member = As<decltype(c->member)>(v, key); } \
  }
#define CROSSBOW_PYTHON(key, value)                                \
  Entry {                                                          \
    key, [](const TrainerConfig&) { return json(value); }, nullptr \
  }

void SetLearners(const json& v, TrainerConfig* c) {
  c->trainer.autotune = v == "auto";
  if (c->trainer.autotune) return;
  int k = 0;
  if (v.is_number_integer()) {
    k = v.get<int>();
  } else if (v.is_string()) {
    const std::string s = v.get<std::string>();
    k = s.find_first_not_of("0123456789") == std::string::npos && !s.empty() ? std::stoi(s) : 0;
  }
  CROSSBOW_ENFORCE_VALUE(k >= 1, "learners must be 'auto' or a number >= 1, got ", v.dump());
  c->engine.learners_per_device = k;
}

const std::vector<Entry>& Entries() {
  static const std::vector<Entry> entries = {
      CROSSBOW_PYTHON("batch_size", 16),
      {"learners", [](const TrainerConfig&) { return json("auto"); }, SetLearners},
      {"sync", [](const TrainerConfig& c) { return json(c.engine.sync); },
       [](const json& v, TrainerConfig* c) {
         c->engine.sync = As<std::string>(v, "sync");
         CheckSynchroniserName(c->engine.sync);
       }},
      CROSSBOW_FIELD("sync_period", engine.sync_period),
      {"devices", [](const TrainerConfig&) { return json("cpu"); },
       [](const json& v, TrainerConfig* c) {
         c->engine.devices = ParseDevices(As<std::string>(v, "devices"));
       }},
      CROSSBOW_UNSET("epochs", trainer.epochs),
      CROSSBOW_UNSET("iterations", trainer.iterations),
      CROSSBOW_UNSET("time_limit", trainer.time_limit_s),
      CROSSBOW_UNSET("target_accuracy", trainer.target_accuracy),
      CROSSBOW_FIELD("lr", trainer.lr.base_lr),
      CROSSBOW_FIELD("lr_policy", trainer.lr.policy),
      CROSSBOW_FIELD("gamma", trainer.lr.gamma),
      CROSSBOW_FIELD("power", trainer.lr.power),
      CROSSBOW_FIELD("step_size", trainer.lr.step_size),
      CROSSBOW_FIELD("steps", trainer.lr.steps),
      CROSSBOW_FIELD("warmup", trainer.lr.warmup),
      CROSSBOW_FIELD("warmup_start", trainer.lr.warmup_start),
      CROSSBOW_PYTHON("momentum", 0.9),
      CROSSBOW_PYTHON("weight_decay", 1e-4),
      CROSSBOW_FIELD("alpha", engine.alpha),
      CROSSBOW_FIELD("central_momentum", engine.central_momentum),
      CROSSBOW_FIELD("central_momentum_type", engine.central_momentum_type),
      CROSSBOW_FIELD("outer_lr", engine.outer_lr),
      CROSSBOW_FIELD("outer_momentum", engine.outer_momentum),
      CROSSBOW_FIELD("autotune_threshold", trainer.autotune_threshold),
      CROSSBOW_FIELD("threads_per_learner", engine.threads_per_learner),
      CROSSBOW_FIELD("eval_every", trainer.eval_every),
      CROSSBOW_UNSET("checkpoint_dir", trainer.checkpoint_dir),
      CROSSBOW_FIELD("checkpoint_every_epochs", trainer.checkpoint_every_epochs),
      CROSSBOW_FIELD("checkpoint_every_minutes", trainer.checkpoint_every_minutes),
      CROSSBOW_FIELD("resume", trainer.resume),
      CROSSBOW_UNSET("metrics", trainer.metrics_path),
      CROSSBOW_PYTHON("tensorboard", nullptr),
      CROSSBOW_FIELD("log_every", trainer.log_every),
      CROSSBOW_FIELD("progress", trainer.progress),
      CROSSBOW_FIELD("stall_timeout", trainer.stall_timeout_s),
      CROSSBOW_FIELD("skip_nan", engine.skip_nan),
      CROSSBOW_PYTHON("workers", 2),
      CROSSBOW_PYTHON("augment", "auto"),
      CROSSBOW_PYTHON("input_size", nullptr),
      CROSSBOW_PYTHON("mean", json::array()),
      CROSSBOW_PYTHON("std", json::array()),
      CROSSBOW_PYTHON("num_classes", nullptr),
      CROSSBOW_FIELD("seed", engine.seed),
      {"collective_timeout",
       [](const TrainerConfig& c) { return json(c.engine.collective_timeout_ms / 1000.0); },
       [](const json& v, TrainerConfig* c) {
         const double s = As<double>(v, "collective_timeout");
         CROSSBOW_ENFORCE_VALUE(s > 0 && s < 2e6, "collective_timeout must be in (0, 2e6) ",
                                "seconds, got ", s);
         c->engine.collective_timeout_ms = static_cast<int>(s * 1000);
       }},
  };
  return entries;
}

}  // namespace

std::vector<TrainerOption> TrainerOptionTable() {
  const TrainerConfig defaults;
  std::vector<TrainerOption> out;
  for (const Entry& e : Entries()) out.push_back({e.name, e.get(defaults).dump(), !e.set});
  return out;
}

TrainerConfig ParseTrainerConfig(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  CROSSBOW_ENFORCE_VALUE(j.is_object(), "trainer options must be a JSON object");
  TrainerConfig c;
  std::vector<std::string> names;
  for (const Entry& e : Entries()) {
    names.push_back(e.name);
    const json value = e.get(c);  // a default that is not the field's own (learners, devices)
    if (e.set && !value.is_null()) e.set(value, &c);
  }
  for (const auto& [key, value] : j.items()) {
    auto it = std::find_if(Entries().begin(), Entries().end(),
                           [&](const Entry& e) { return key == e.name; });
    CROSSBOW_ENFORCE_VALUE(it != Entries().end(), "unknown trainer option '", key, "'",
                           DidYouMean(key, names));
    if (it->set && !value.is_null()) it->set(value, &c);
  }
  return c;
}

}  // namespace crossbow
