#include "crossbow/engine/trainer_options.h"

#include <gtest/gtest.h>

#include <set>

#include "crossbow/engine/trainer_config.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

TEST(TrainerOptionTable, NamesEachOptionOnce) {
  std::set<std::string> names;
  for (const TrainerOption& o : TrainerOptionTable()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name << " twice";
  }
  EXPECT_TRUE(names.count("sync_period") && names.count("workers"));
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
  EXPECT_ERROR(ParseTrainerConfig(R"({"sync_perod": 2})"), ValueError,
               "unknown trainer option 'sync_perod'; did you mean 'sync_period'?");
  EXPECT_ERROR(ParseTrainerConfig(R"({"sync": "locasgd"})"), ValueError,
               "did you mean 'localsgd'?");
  EXPECT_ERROR(ParseTrainerConfig(R"({"alpha": "high"})"), ValueError,
               "trainer option 'alpha' has the wrong type");
  EXPECT_ERROR(ParseTrainerConfig(R"({"learners": 0})"), ValueError, "learners must be 'auto'");
}

}  // namespace
}  // namespace crossbow
