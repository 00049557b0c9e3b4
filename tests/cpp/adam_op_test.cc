#include <gtest/gtest.h>

#include <cmath>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

// torch.optim.AdamW's and torch.optim.RAdam's (decoupled_weight_decay=True) documented steps, in
// double, written out here rather than through adam_step.h.
struct AdamReference {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay;
  bool rectify;
  std::vector<double> w, m, v;
  int t = 0;

  void Step(const std::vector<float>& g, double lr) {
    ++t;
    const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    const double rho_inf = 2 / (1 - beta2) - 1;
    const double rho_t = rho_inf - 2 * t * std::pow(beta2, t) / bc2;
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] *= 1 - lr * weight_decay;
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      const double m_hat = m[i] / bc1;
      if (!rectify) {
        w[i] -= lr * m_hat / (std::sqrt(v[i] / bc2) + eps);
      } else if (rho_t > 5) {
        const double r = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf /
                                   ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        w[i] -= lr * m_hat * r * std::sqrt(bc2) / (std::sqrt(v[i]) + eps);
      } else {
        w[i] -= lr * m_hat;
      }
    }
  }
};

std::vector<float> AsFloats(const std::vector<double>& x) { return {x.begin(), x.end()}; }

class AdamWCases : public ::testing::TestWithParam<bool> {};

// Twelve steps with weight decay and a rate drop after the sixth; RAdam's first five steps are
// its unrectified ones (rho_t <= 5 while t <= 5 at beta2 = 0.999), so both of its branches run.
TEST_P(AdamWCases, MatchesTorchOptimsEquationsThroughARateDrop) {
  const bool rectify = GetParam();
  const Shape shape = {4, 25};
  OpHarness h;
  h.Feed("w", shape);
  for (const char* name : {"m", "v", "t"}) {
    h.Feed(name, std::string(name) == "t" ? Shape{1} : shape,
           std::vector<float>(std::string(name) == "t" ? 1 : 100, 0.f));
  }
  const std::vector<float> w0 = h.Fetch("w");
  AdamReference ref{0.9,
                    0.999,
                    1e-8,
                    0.05,
                    rectify,
                    {w0.begin(), w0.end()},
                    std::vector<double>(100, 0.0),
                    std::vector<double>(100, 0.0)};
  const OperatorDef op =
      MakeOperator("AdamW", {"w", "g", "m", "v", "t", "lr"}, {"w", "m", "v", "t"},
                   {{"weight_decay", 0.05}, {"rectify", int64_t{rectify}}});
  for (int step = 0; step < 12; ++step) {
    const float lr = step < 6 ? 1e-2f : 1e-3f;
    h.Feed("lr", {}, {lr});
    h.Feed("g", shape);
    ref.Step(h.Fetch("g"), lr);
    h.Run(op);
    // A step moves each weight by about lr: 1e-6 is a thousandth of the smaller one.
    EXPECT_LT(MaxAbsDiff(h.Fetch("w"), AsFloats(ref.w)), 1e-6f) << "step " << step;
    EXPECT_LT(RelativeDiff(h.Fetch("m"), AsFloats(ref.m)), 1e-5) << "step " << step;
    EXPECT_LT(RelativeDiff(h.Fetch("v"), AsFloats(ref.v)), 1e-5) << "step " << step;
    EXPECT_EQ(h.Fetch("t")[0], static_cast<float>(step + 1));
  }
}

INSTANTIATE_TEST_SUITE_P(AdamW, AdamWCases, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "RAdam" : "AdamW"; });

TEST(AdamW, BadArgumentsAndInputsThrow) {
  OpHarness h;
  h.Feed("w", {3});
  h.Feed("g", {3});
  h.Feed("m", {3});
  h.Feed("v", {2});
  h.Feed("t", {1}, {0.f});
  h.Feed("lr", {1}, {0.1f});
  const std::vector<std::string> in = {"w", "g", "m", "v", "t", "lr"}, out = {"w", "m", "v", "t"};
  EXPECT_ERROR(h.Run(MakeOperator("AdamW", in, out)), ValueError,
               "AdamW: input 3 'v' has shape [2], expected the shape of input 0 'w' [3]");
  h.Feed("v", {3});
  EXPECT_ERROR(h.Run(MakeOperator("AdamW", in, out, {{"beta2", 1.0}})), ValueError,
               "AdamW: argument 'beta2' must be in [0, 1), got 1");
  EXPECT_ERROR(h.Run(MakeOperator("AdamW", in, out, {{"eps", 0.0}})), ValueError,
               "AdamW: argument 'eps' must be > 0, got 0");
  EXPECT_ERROR(h.Run(MakeOperator("AdamW", in, {"w2", "m", "v", "t"})), ValueError,
               "AdamW: output 0 ('w2') must be input 0 ('w')");
  h.FeedInt("ti", {1}, {0});
  EXPECT_ERROR(
      h.Run(MakeOperator("AdamW", {"w", "g", "m", "v", "ti", "lr"}, {"w", "m", "v", "ti"})),
      ValueError, "AdamW: input 4 'ti' must be float32, got int32");
  for (const char* name : {"w4", "m4", "v4", "g4_plain"}) h.Feed(name, {1, 16, 2, 2});
  CopyToBlocked(h, "g4_plain", "g4");
  EXPECT_ERROR(
      h.Run(MakeOperator("AdamW", {"w4", "g4", "m4", "v4", "t", "lr"}, {"w4", "m4", "v4", "t"})),
      ValueError, "AdamW: input 1 'g4' must be plain row-major, got ");
}

}  // namespace
}  // namespace crossbow::testing
