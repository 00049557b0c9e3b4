#include <gtest/gtest.h>

#include <cmath>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

double Mish(double x) { return x * std::tanh(std::log1p(std::exp(x))); }

// X spread over [-6, 6] (where Mish bends) and beyond, in a 4-D shape with 16 channels.
std::vector<float> Spread(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = -8.f + 16.f * static_cast<float>(i) / (n - 1);
  return x;
}

TEST(Mish, ForwardMatchesDefinitionPlainAndBlocked) {
  const Shape shape{2, 16, 3, 3};
  const std::vector<float> x = Spread(2 * 16 * 3 * 3);
  for (bool blocked : {false, true}) {
    OpHarness h;
    h.Feed("X", shape, x);
    if (blocked) MakeBlocked(h, "X");
    h.Run(MakeOperator("Mish", {"X"}, {"Y"}));
    if (blocked) EXPECT_TRUE(HasLayout(h, "Y", dnnl::memory::format_tag::nChw16c));
    const std::vector<float> y = h.Fetch("Y");
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_NEAR(y[i], Mish(x[i]), 1e-6 + 2e-6 * std::abs(Mish(x[i]))) << x[i];
    }
  }
}

// Mish from X, Sigmoid from Y: both smooth, so a fine step and a tight tolerance.
void ExpectGradientMatchesNumeric(const std::string& type) {
  OpHarness h;
  h.Feed("X", {2, 16, 3, 3}, {}, -4.f, 4.f);
  GradCheckOptions options;
  options.step = 1e-3f;
  options.rel_tol = 5e-3f;
  CheckGradient(h, MakeOperator(type, {"X"}, {"Y"}), {0}, options);
}

TEST(Mish, GradientMatchesNumeric) { ExpectGradientMatchesNumeric("Mish"); }

TEST(Mish, GradientOfBlockedInputsIsThePlainOnes) {
  OpHarness h;
  h.Feed("X", {2, 16, 2, 2});
  h.Feed("dY", {2, 16, 2, 2});
  h.Run(MakeOperator("MishGradient", {"X", "dY"}, {"dX"}));
  const std::vector<float> plain = h.Fetch("dX");
  CopyToBlocked(h, "X", "Xb");
  h.Run(MakeOperator("MishGradient", {"Xb", "dY"}, {"dXb"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("dXb"), plain), 1e-6f);
}

TEST(Mish, GradientRefusesAMisshapenDy) {
  OpHarness h;
  h.Feed("X", {2, 3});
  h.Feed("dY", {3, 2});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("MishGradient", {"X", "dY"}, {"dX"}));
      },
      {"MishGradient", "'dY' has shape [3, 2], expected [2, 3]"});
}

TEST(Sigmoid, ForwardMatchesDefinitionInPlaceAndBlocked) {
  const std::vector<float> x = Spread(2 * 16 * 2 * 2);
  OpHarness h;
  h.Feed("X", {2, 16, 2, 2}, x);
  h.Run(MakeOperator("Sigmoid", {"X"}, {"Y"}));
  const std::vector<float> y = h.Fetch("Y");
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], 1 / (1 + std::exp(-double(x[i]))), 1e-7);
  MakeBlocked(h, "X");
  h.Run(MakeOperator("Sigmoid", {"X"}, {"X"}));
  EXPECT_TRUE(HasLayout(h, "X", dnnl::memory::format_tag::nChw16c));
  EXPECT_LT(MaxAbsDiff(h.Fetch("X"), y), 1e-7f);
}

TEST(Sigmoid, GradientMatchesNumeric) { ExpectGradientMatchesNumeric("Sigmoid"); }

}  // namespace
}  // namespace crossbow::testing
