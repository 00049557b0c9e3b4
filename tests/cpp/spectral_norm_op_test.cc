#include <gtest/gtest.h>

#include <cmath>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

OperatorDef Training(int64_t iterations = 1) {
  return MakeOperator("SpectralNorm", {"W", "u", "v"}, {"Y", "u", "v"},
                      {{"power_iterations", iterations}});
}

OperatorDef TestMode() {
  return MakeOperator("SpectralNorm", {"W", "u", "v"}, {"Y"}, {{"is_test", int64_t{1}}});
}

std::vector<double> Normalized(std::vector<double> x) {
  double norm = 0;
  for (double e : x) norm += e * e;
  for (double& e : x) e /= std::sqrt(norm);
  return x;
}

// torch.nn.utils.spectral_norm's training step, in double: v = normalize(W^T u), u =
// normalize(W v), Y = W / (u^T W v).
TEST(SpectralNorm, TrainingStepMatchesTheDefinition) {
  OpHarness h;
  const int64_t rows = 5, cols = 6;
  h.Feed("W", {rows, 3, 2, 1});
  h.Feed("u", {rows});
  h.Feed("v", {cols});
  const std::vector<float> w = h.Fetch("W"), u0 = h.Fetch("u");
  h.Run(Training());
  std::vector<double> v(cols), u(rows);
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) v[c] += w[r * cols + c] * double(u0[r]);
  }
  v = Normalized(v);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) u[r] += w[r * cols + c] * v[c];
  }
  u = Normalized(u);
  double sigma = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) sigma += u[r] * w[r * cols + c] * v[c];
  }
  const std::vector<float> got_u = h.Fetch("u"), got_v = h.Fetch("v"), y = h.Fetch("Y");
  for (int64_t r = 0; r < rows; ++r) EXPECT_NEAR(got_u[r], u[r], 1e-6);
  for (int64_t c = 0; c < cols; ++c) EXPECT_NEAR(got_v[c], v[c], 1e-6);
  EXPECT_EQ(h.ShapeOf("Y"), (Shape{rows, 3, 2, 1}));
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(y[i], w[i] / sigma, 1e-5 * std::abs(y[i]));
}

// W = a b^T has one singular value, |a| |b|, which one step finds from any u.
TEST(SpectralNorm, DividesARankOneWeightByItsSingularValue) {
  OpHarness h;
  const std::vector<float> a = {1.f, -2.f, 2.f}, b = {3.f, 4.f};  // |a| |b| = 3 * 5
  std::vector<float> w;
  for (float x : a) {
    for (float y : b) w.push_back(x * y);
  }
  h.Feed("W", {3, 2}, w);
  h.Feed("u", {3});
  h.Feed("v", {2});
  h.Run(Training());
  const std::vector<float> y = h.Fetch("Y");
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(y[i], w[i] / 15.f, 1e-6) << i;
}

// Test mode uses u and v as stored, as directions: scaling them changes nothing.
TEST(SpectralNorm, TestModeKeepsUAndVAndReadsThemAsDirections) {
  OpHarness h;
  h.Feed("W", {4, 3});
  h.Feed("u", {4});
  h.Feed("v", {3});
  const std::vector<float> u = h.Fetch("u"), v = h.Fetch("v");
  h.Run(TestMode());
  EXPECT_EQ(h.Fetch("u"), u);
  EXPECT_EQ(h.Fetch("v"), v);
  const std::vector<float> y = h.Fetch("Y");
  std::vector<float> u7(u), v3(v);
  for (float& e : u7) e *= 7.f;
  for (float& e : v3) e *= 0.5f;
  h.Feed("u", {4}, u7);
  h.Feed("v", {3}, v3);
  h.Run(TestMode());
  EXPECT_LT(RelativeDiff(h.Fetch("Y"), y), 1e-6);
}

TEST(SpectralNorm, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("W", {5, 4, 1, 1});
  h.Feed("u", {5});
  h.Feed("v", {4});
  GradCheckOptions options;
  options.step = 1e-3f;
  CheckGradient(h, TestMode(), {0}, options);
}

TEST(SpectralNorm, RefusesMisfitVectorsAndTrainingWithoutThem) {
  OpHarness h;
  h.Feed("W", {4, 3, 1});
  h.Feed("u", {4});
  h.Feed("v", {4});
  ExpectValueError([&] { h.Run(Training()); },
                   {"SpectralNorm",
                    "u 'u' [4] and v 'v' [4] do not fit weight 'W' [4, 3, 1]: "
                    "expected [4] and [3]"});
  h.Feed("v", {3});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("SpectralNorm", {"W", "u", "v"}, {"Y"}));
      },
      "outputs 1 and 2 must be named");
  ExpectValueError(
      [&] {
        InferShapes(MakeOperator("SpectralNorm", {"W", "u", "v"}, {"Y"}), {{4, 3}, {4}, {3}});
      },
      "outputs 1 and 2 must be named");
}

}  // namespace
}  // namespace crossbow::testing
