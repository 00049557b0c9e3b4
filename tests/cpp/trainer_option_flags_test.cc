#include "crossbow/train/trainer_option_flags.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

bool All(const TrainerOption&) { return true; }

// Runs TakeOptionFlags on `args`; returns the options and leaves in `args` what it kept.
nlohmann::json Take(std::vector<std::string>* args, const OptionFilter& read = All,
                    std::vector<std::string>* given = nullptr) {
  std::vector<char*> argv;
  for (std::string& a : *args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  const nlohmann::json options =
      nlohmann::json::parse(TakeOptionFlags(&argc, argv.data(), read, given));
  std::vector<std::string> kept(argv.begin(), argv.begin() + argc);
  *args = kept;
  return options;
}

TEST(OptionFlags, ReadFlagsAsCrossbowTrainDoesAndLeaveTheOthers) {
  std::vector<std::string> args = {"tool",     "--batch-size",  "8",        "--spec",      "x.json",
                                   "--lr=0.5", "--no-progress", "--resume", "--steps=1,2", "--sync",
                                   "localsgd", "--seconds=3"};
  std::vector<std::string> given;
  const nlohmann::json o = Take(&args, All, &given);
  EXPECT_EQ(given,
            (std::vector<std::string>{"batch_size", "lr", "progress", "resume", "steps", "sync"}));
  EXPECT_EQ(o["batch_size"], 8);
  EXPECT_EQ(o["lr"], 0.5);
  EXPECT_EQ(o["progress"], false);
  EXPECT_EQ(o["resume"], true);
  EXPECT_EQ(o["steps"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(o["sync"], "localsgd");
  EXPECT_EQ(o["alpha"], "auto");  // the table's default
  EXPECT_EQ(args, (std::vector<std::string>{"tool", "--spec", "x.json", "--seconds=3"}));
}

TEST(OptionFlags, OnlyWhatTheToolReadsAndAValueWhereOneIsNeeded) {
  std::vector<std::string> args = {"tool", "--epochs", "3", "--seed", "7"};
  const nlohmann::json o = Take(&args, [](const TrainerOption& t) { return t.name == "seed"; });
  EXPECT_EQ(o["seed"], 7);
  EXPECT_EQ(args, (std::vector<std::string>{"tool", "--epochs", "3"}));
  std::vector<std::string> bare = {"tool", "--lr"};
  EXPECT_ERROR(Take(&bare), ValueError, "flag --lr needs a value");
}

TEST(OptionFlags, HelpNamesEachOptionWithItsUnitRuleAndDefault) {
  const std::string help = OptionFlagsHelp(All);
  EXPECT_NE(help.find("  --batch_size IMAGES  images per learner per iteration (> 0) [16]"),
            std::string::npos);
  EXPECT_NE(help.find("  --progress  a progress bar on stderr [true]"), std::string::npos);
}

}  // namespace
}  // namespace crossbow
