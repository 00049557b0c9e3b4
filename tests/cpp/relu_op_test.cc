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
  // Every element is checked, so that both signs are (a spread-out subset of this alternating
  // pattern would pick one sign only).
  for (size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? 1.f : -1.f) * (0.1f + 0.01f * (i % 17));
  h.Feed("X", {2, 16, 3, 3}, x);
  GradCheckOptions options;
  options.max_elements = static_cast<int>(x.size());
  CheckGradient(h, MakeOperator("Relu", {"X"}, {"Y"}), {0}, options);
  // Y = X where X > 0 and 0 elsewhere, so dX is dY on the positive half and 0 on the other.
  h.Feed("dY", {2, 16, 3, 3});
  h.Run(MakeOperator("ReluGradient", {"Y", "dY"}, {"dX"}));
  const std::vector<float> dy = h.Fetch("dY"), dx = h.Fetch("dX");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(dx[i], x[i] > 0 ? dy[i] : 0.f) << i;
}

}  // namespace crossbow::testing
