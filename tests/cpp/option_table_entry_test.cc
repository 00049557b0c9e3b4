// The table's promise: one entry makes everything. An option added before the table is first
// read (here before main, by a static initialiser) becomes a flag of the C++ tools with its doc,
// rule and default, a key whose rule is checked with an error naming it, and one of the options
// that ranks compare and checkpoints keep; nothing else was written for it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "crossbow/train/trainer_config.h"
#include "crossbow/train/trainer_option_flags.h"
#include "crossbow/train/trainer_options.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

const bool kAdded =
    (AddOptionForTest("test_only_ratio", "a ratio that only this test reads", 0.5, 2.0), true);

bool All(const TrainerOption&) { return true; }

bool Has(const std::vector<std::pair<std::string, std::string>>& options,
         const std::pair<std::string, std::string>& option) {
  return std::find(options.begin(), options.end(), option) != options.end();
}

TEST(OptionTableEntry, IsTheTablesLastOptionWithItsTypeDefaultAndRule) {
  ASSERT_TRUE(kAdded);
  const TrainerOption last = TrainerOptionTable().back();
  EXPECT_EQ(last.name, "test_only_ratio");
  EXPECT_EQ(last.type, "float");
  EXPECT_EQ(last.default_json, "2.0");
  EXPECT_EQ(last.rule, "finite and >= 0.5");
  EXPECT_EQ(last.reader, "engine");
}

TEST(OptionTableEntry, IsAFlagWithItsHelp) {
  EXPECT_NE(OptionFlagsHelp(All).find(
                "  --test_only_ratio TEST_ONLY_RATIO  a ratio that only this test reads "
                "(finite and >= 0.5) [2.0]"),
            std::string::npos);
  std::string tool = "tool", flag = "--test-only-ratio=3";
  std::vector<char*> argv = {tool.data(), flag.data()};
  int argc = 2;
  const auto options = nlohmann::json::parse(TakeOptionFlags(&argc, argv.data(), All));
  EXPECT_EQ(options["test_only_ratio"], 3.0);
  EXPECT_EQ(argc, 1);
}

TEST(OptionTableEntry, IsAKeyCheckedByItsRule) {
  EXPECT_ERROR(ParseTrainerConfig(R"({"test_only_ratio": 0.25})"), ValueError,
               "test_only_ratio (--test-only-ratio) must be finite and >= 0.5, got 0.25");
  EXPECT_ERROR(ParseTrainerConfig(R"({"test_only_ratoi": 1})"), ValueError,
               "did you mean 'test_only_ratio'");
  EXPECT_ERROR(ParseEngineOptions(R"({"test_only_ratio": "many"})"), ValueError, "test_only_ratio");
  ParseTrainerConfig(R"({"test_only_ratio": 3})");
  EXPECT_EQ(TestOptionValue("test_only_ratio"), 3.0);
  ParseTrainerConfig(R"({"test_only_ratio": 2})");  // the value lives beside the table
}

TEST(OptionTableEntry, IsComparedAcrossRanksAndKeptInCheckpoints) {
  const TrainerConfig c = ParseTrainerConfig(R"({"test_only_ratio": 4})");
  EXPECT_TRUE(Has(RankComparedOptions(c.engine, c.trainer), {"test_only_ratio", "4.0"}));
  EXPECT_TRUE(Has(CheckpointedOptions(c.engine, c.trainer), {"test_only_ratio", "4.0"}));
  ParseTrainerConfig(R"({"test_only_ratio": 2})");  // the value lives beside the table
}

TEST(OptionTableEntry, CannotBeAddedOnceTheTableWasRead) {
  TrainerOptionTable();
  EXPECT_ERROR(AddOptionForTest("too_late", "doc", 0, 1), Error,
               "option 'too_late' was added for a test after the table of options was read");
}

}  // namespace
}  // namespace crossbow
