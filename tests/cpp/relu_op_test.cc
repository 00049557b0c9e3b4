#include <gtest/gtest.h>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {

TEST(Relu, ForwardMatchesDefinition) {
  OpHarness h;
  h.Feed("X", {2, 3}, {-1.f, 0.5f, 2.f, -0.1f, 0.f, 3.f});
  h.Run(MakeOperator("Relu", {"X"}, {"Y"}));
  EXPECT_EQ(h.Fetch("Y"), (std::vector<float>{0.f, 0.5f, 2.f, 0.f, 0.f, 3.f}));
}

TEST(Relu, GradientMatchesNumeric) {
  OpHarness h;
  std::vector<float> x(2 * 16 * 3 * 3);
  // Keep values away from the kink at 0, where the numeric derivative is undefined.
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? 1.f : -1.f) * (0.1f + 0.01f * (i % 17));
  h.Feed("X", {2, 16, 3, 3}, x);
  CheckGradient(h, MakeOperator("Relu", {"X"}, {"Y"}), {0});
}

}  // namespace crossbow::testing
