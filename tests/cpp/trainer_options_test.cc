#include "crossbow/train/trainer_options.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "crossbow/engine/learner_spec.h"
#include "crossbow/train/trainer_config.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

TEST(TrainerOptionTable, NamesEachOptionOnceWithATypeAndADoc) {
  std::set<std::string> names;
  for (const TrainerOption& o : TrainerOptionTable()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
    EXPECT_TRUE(std::set<std::string>({"int", "float", "str", "bool", "floats"}).count(o.type))
        << o.name;
    EXPECT_FALSE(o.doc.empty()) << o.name;
  }
  EXPECT_TRUE(names.count("sync_period") && names.count("workers"));
}

// Model and ModelBuilder.to_spec read library_default: the learner spec's own default, which
// only weight_decay's entry sets apart from the commands' (1e-4).
TEST(TrainerOptionTable, TheLibraryDefaultsAreTheLearnerSpecsAndDifferOnlyWhereTheTableSays) {
  const SolverConfig solver;
  const std::map<std::string, nlohmann::json> spec_defaults = {
      {"lr", solver.lr},
      {"momentum", solver.momentum},
      {"weight_decay", solver.weight_decay},
      {"nesterov", solver.nesterov},
      {"bias_decay", solver.bias_decay},
      {"momentum_convention", solver.momentum_convention},
      {"optimizer", solver.type}};
  std::set<std::string> differ;
  for (const TrainerOption& o : TrainerOptionTable()) {
    if (o.library_default_json != o.default_json) differ.insert(o.name);
    auto spec = spec_defaults.find(o.name);
    if (spec != spec_defaults.end()) {
      EXPECT_EQ(nlohmann::json::parse(o.library_default_json), spec->second) << o.name;
    }
  }
  EXPECT_EQ(differ, std::set<std::string>{"weight_decay"});
}

TEST(TrainerOptionTable, EveryDefaultParsesToWhatAnEmptyObjectGives) {
  std::string all = "{";
  for (const TrainerOption& o : TrainerOptionTable()) {
    all += (all.size() > 1 ? ",\"" : "\"") + o.name + "\":" + o.default_json;
  }
  const TrainerConfig a = ParseTrainerConfig(all + "}"), b = ParseTrainerConfig("{}");
  EXPECT_TRUE(b.trainer.autotune);  // learners: auto
  ASSERT_EQ(b.engine.devices.size(), 1u);
  EXPECT_EQ(a.engine.devices[0].cores, b.engine.devices[0].cores);
  EXPECT_EQ(a.engine.sync, "sma");
  EXPECT_EQ(a.engine.alpha, b.engine.alpha);
  EXPECT_EQ(a.engine.collective_timeout_ms, b.engine.collective_timeout_ms);
  EXPECT_EQ(a.trainer.lr.base_lr, b.trainer.lr.base_lr);
  EXPECT_EQ(a.trainer.stall_timeout_s, b.trainer.stall_timeout_s);
  EXPECT_NO_THROW(CheckEngineOptions(a.engine));
}

TEST(TrainerOptionTable, ReadsValuesAndRefusesUnknownKeysWithASuggestion) {
  const TrainerConfig c = ParseTrainerConfig(
      R"({"sync": "diloco", "sync_period": 4, "outer_lr": 0.5, "learners": "3",
          "collective_timeout": 2, "epochs": 5, "workers": 8, "checkpoint_dir": null})");
  EXPECT_EQ(c.engine.sync, "diloco");
  EXPECT_EQ(c.engine.sync_period, 4);
  EXPECT_EQ(c.engine.outer_lr, 0.5);
  EXPECT_EQ(c.engine.learners_per_device, 3);
  EXPECT_FALSE(c.trainer.autotune);
  EXPECT_EQ(c.engine.collective_timeout_ms, 2000);
  EXPECT_EQ(c.trainer.epochs, 5);
  EXPECT_EQ(ParseTrainerConfig(R"({"learners": 2})").engine.learners_per_device, 2);
  EXPECT_ERROR(ParseTrainerConfig(R"({"sync_perod": 2})"), ValueError,
               "unknown trainer option 'sync_perod'; did you mean 'sync_period'?");
}

TEST(TrainerOptionTable, SyncPeriodAndAlphaAreAutoOrANumber) {
  const EngineOptions defaults = ParseTrainerConfig("{}").engine;
  EXPECT_EQ(defaults.sync_period, 0);  // auto
  EXPECT_EQ(defaults.alpha, 0);
  const EngineOptions given =
      ParseTrainerConfig(R"({"sync_period": "8", "alpha": 0.05})").engine;  // a flag, a keyword
  EXPECT_EQ(given.sync_period, 8);
  EXPECT_EQ(given.alpha, 0.05);
  EXPECT_EQ(ParseTrainerConfig(R"({"alpha": "auto"})").engine.alpha, 0);
  EXPECT_ERROR(ParseTrainerConfig(R"({"sync_period": "2.5"})"), ValueError,
               "sync_period (--sync-period) must be an integer, got 2.5");
}

TEST(TrainerOptionTable, ValuesOutsideTheirRuleAreErrorsNamingTheFlag) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"epochs": 0})", "epochs (--epochs) must be > 0, got 0"},
      {R"({"lr": -1})", "lr (--lr) must be finite and >= 0, got -1"},
      {R"({"lr": "nan"})", "lr (--lr) must be finite and >= 0, got nan"},
      {R"({"time_limit": "inf"})", "time_limit (--time-limit) must be finite and > 0, got inf"},
      {R"({"momentum": 1})", "momentum (--momentum) must be in [0, 1), got 1"},
      {R"({"alpha": 0})", "alpha (--alpha) must be in (0, 1], got 0"},
      {R"({"steps": [1, -2]})", "steps (--steps) must be finite and >= 0, got [1, -2]"},
      {R"({"batch_size": 16.5})", "batch_size (--batch-size) must be an integer, got 16.5"},
      {R"({"alpha": "high"})", "alpha (--alpha) must be a number, got \"high\""},
      {R"({"resume": 1})", "resume (--resume) must be true or false, got 1"},
      {R"({"learners": 0})", "learners (--learners) must be 'auto' or a number >= 1, got '0'"},
      {R"({"sync": "locasgd"})",
       "sync (--sync) must be diloco, easgd, localsgd, sgd, sma or ssgd, got 'locasgd'; did you "
       "mean 'localsgd'?"},
      {R"({"central_momentum_type": "heavy"})",
       "central_momentum_type (--central-momentum-type) must be polyak or nesterov, got 'heavy'"},
  };
  for (const auto& [json, message] : cases) {
    EXPECT_ERROR(ParseTrainerConfig(json), ValueError, message);
  }
}

TEST(TrainerOptionTable, OptionsInCodeAreCheckedByTheSameRules) {
  EngineOptions engine;
  engine.threads_per_learner = 0;
  EXPECT_ERROR(CheckEngineOptions(engine), ValueError,
               "threads_per_learner (--threads-per-learner) must be > 0, got 0");
  engine.threads_per_learner = 1;
  engine.alpha = 1.5;
  EXPECT_ERROR(CheckEngineOptions(engine), ValueError,
               "alpha (--alpha) must be in (0, 1], got 1.5");
  engine.alpha = 0.1;
  engine.sync = "async";
  EXPECT_ERROR(CheckEngineOptions(engine), ValueError,
               "sync (--sync) must be diloco, easgd, localsgd, sgd, sma or ssgd, got 'async'");
  TrainerOptions trainer;
  EXPECT_ERROR(CheckTrainerOptions(trainer), ValueError, "training would never stop");
  trainer.iterations = 10;
  trainer.lr.warmup_start = 2;
  EXPECT_ERROR(CheckTrainerOptions(trainer), ValueError,
               "warmup_start (--warmup-start) must be in [0, 1], got 2");
  trainer.lr.warmup_start = 0.1;
  trainer.resume = true;
  EXPECT_ERROR(CheckTrainerOptions(trainer), ValueError,
               "resume (--resume) needs a checkpoint_dir (--checkpoint-dir)");
}

// Ranks agree on resume; a checkpoint does not keep it, as it says how a process starts.
TEST(TrainerOptionTable, CheckpointsKeepTheRanksOptionsButResume) {
  auto names = [](const std::vector<std::pair<std::string, std::string>>& options) {
    std::set<std::string> out;
    for (const auto& option : options) out.insert(option.first);
    return out;
  };
  std::set<std::string> kept = names(CheckpointedOptions(EngineOptions{}, TrainerOptions{}));
  std::set<std::string> compared = names(RankComparedOptions(EngineOptions{}, TrainerOptions{}));
  EXPECT_TRUE(compared.count("resume"));
  compared.erase("resume");
  EXPECT_EQ(kept, compared);
}

TEST(TrainerOptionTable, RanksCompareWhatChangesTheRunAndNotWhereEachLogs) {
  std::set<std::string> compared;
  for (const auto& [name, value] : RankComparedOptions(EngineOptions{}, TrainerOptions{})) {
    compared.insert(name);
  }
  for (const char* name : {"sync", "sync_period", "lr", "steps", "alpha", "seed", "epochs"}) {
    EXPECT_TRUE(compared.count(name)) << name;
  }
  for (const char* name : {"metrics", "progress", "devices", "stall_timeout", "batch_size"}) {
    EXPECT_FALSE(compared.count(name)) << name;
  }
}

}  // namespace
}  // namespace crossbow
