#include "crossbow/core/names.h"

#include <gtest/gtest.h>

namespace crossbow {
namespace {

TEST(Names, DidYouMeanTakesTheNearestWithinHalfTheLength) {
  const std::vector<std::string> syncs = {"diloco", "easgd", "localsgd", "sgd", "sma", "ssgd"};
  EXPECT_EQ(DidYouMean("locasgd", syncs), "; did you mean 'localsgd'?");  // a letter left out
  EXPECT_EQ(DidYouMean("sam", syncs), "; did you mean 'sma'?");           // two letters swapped
  EXPECT_EQ(DidYouMean("SMA", syncs), "; did you mean 'sma'?");           // case
  EXPECT_EQ(DidYouMean("async", {"sma", "diloco"}), "");
  EXPECT_EQ(DidYouMean("", syncs), "");
}

TEST(Names, JoinNamesReadsAsAList) {
  EXPECT_EQ(JoinNames({"a", "b", "c"}), "a, b or c");
  EXPECT_EQ(JoinNames({"a"}), "a");
  EXPECT_EQ(JoinNames({}), "");
}

}  // namespace
}  // namespace crossbow
