// SoftmaxWithLoss with mixed targets (Mixup, CutMix: inputs label_b and lam).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

constexpr int64_t kRows = 6, kClasses = 7;
const std::vector<int32_t> kLabel = {0, 3, 6, 2, 2, 5};
const std::vector<int32_t> kLabelB = {4, 3, 1, 0, 6, 5};  // rows 1 and 5 mix a class with itself
const std::vector<float> kLam = {0.7f, 0.25f, 1.f, 0.f, 0.5f, 0.9f};

// The smoothed target of a mixed row, in double: lam q(label) + (1 - lam) q(label_b), where
// q(y) = (1 - e) onehot(y) + e / C.
double Target(int64_t r, int64_t j, double e) {
  const double q_a = (j == kLabel[r] ? 1 - e : 0) + e / kClasses;
  const double q_b = (j == kLabelB[r] ? 1 - e : 0) + e / kClasses;
  return kLam[r] * q_a + (1 - kLam[r]) * q_b;
}

// log softmax of row r of x, in double.
std::vector<double> LogProb(const std::vector<float>& x, int64_t r) {
  double max = x[r * kClasses];
  for (int64_t j = 0; j < kClasses; ++j) max = std::max(max, double{x[r * kClasses + j]});
  double sum = 0;
  for (int64_t j = 0; j < kClasses; ++j) sum += std::exp(x[r * kClasses + j] - max);
  std::vector<double> out(kClasses);
  for (int64_t j = 0; j < kClasses; ++j) out[j] = x[r * kClasses + j] - max - std::log(sum);
  return out;
}

OperatorDef MixedLoss(float e) {
  return MakeOperator("SoftmaxWithLoss", {"X", "label", "label_b", "lam"}, {"prob", "loss"},
                      {{"label_smoothing", e}});
}

void FeedMixed(OpHarness& h) {
  h.Feed("X", {kRows, kClasses}, {}, -2.f, 2.f);
  h.FeedInt("label", {kRows}, kLabel);
  h.FeedInt("label_b", {kRows}, kLabelB);
  h.Feed("lam", {kRows}, kLam);
}

class SoftmaxMixedLoss : public ::testing::TestWithParam<float> {};

TEST_P(SoftmaxMixedLoss, LossIsTheCrossEntropyAgainstTheMixedTarget) {
  const double e = GetParam();
  OpHarness h;
  FeedMixed(h);
  h.Run(MixedLoss(GetParam()));
  const std::vector<float> x = h.Fetch("X");
  double expected = 0, weighted = 0;  // -sum q log p; lam CE(label) + (1 - lam) CE(label_b)
  for (int64_t r = 0; r < kRows; ++r) {
    const std::vector<double> log_prob = LogProb(x, r);
    double ce_a = 0, ce_b = 0;
    for (int64_t j = 0; j < kClasses; ++j) {
      expected -= Target(r, j, e) * log_prob[j];
      ce_a -= ((j == kLabel[r] ? 1 - e : 0) + e / kClasses) * log_prob[j];
      ce_b -= ((j == kLabelB[r] ? 1 - e : 0) + e / kClasses) * log_prob[j];
    }
    weighted += kLam[r] * ce_a + (1 - kLam[r]) * ce_b;
  }
  EXPECT_NEAR(h.Fetch("loss")[0], expected / kRows, 1e-5);
  EXPECT_NEAR(expected, weighted, 1e-9);  // the two readings of the mixed loss agree
}

TEST_P(SoftmaxMixedLoss, GradientIsProbabilityMinusMixedTargetOverN) {
  const float e = GetParam();
  OpHarness h;
  FeedMixed(h);
  h.Run(MixedLoss(e));
  h.Feed("dloss", {}, {0.5f});
  h.Run(MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss", "label_b", "lam"},
                     {"dX"}, {{"label_smoothing", e}}));
  const std::vector<float> dx = h.Fetch("dX"), x = h.Fetch("X");
  for (int64_t r = 0; r < kRows; ++r) {
    const std::vector<double> log_prob = LogProb(x, r);
    for (int64_t j = 0; j < kClasses; ++j) {
      const double expected = 0.5 * (std::exp(log_prob[j]) - Target(r, j, e)) / kRows;
      EXPECT_NEAR(dx[r * kClasses + j], expected, 1e-7 + 1e-5 * std::fabs(expected))
          << "row " << r << " class " << j;
    }
  }
}

TEST_P(SoftmaxMixedLoss, GradientMatchesNumeric) {
  OpHarness h;
  FeedMixed(h);
  GradCheckOptions options;
  options.outputs = {1};
  options.max_elements = static_cast<int>(kRows * kClasses);
  options.abs_tol = 2e-5f;  // as the unmixed check: off-label gradients are about p / N, 1e-2
  options.step = 5e-2f;
  CheckGradient(h, MixedLoss(GetParam()), {0}, options);
}

INSTANTIATE_TEST_SUITE_P(Smoothing, SoftmaxMixedLoss, ::testing::Values(0.f, 0.1f));

TEST(SoftmaxMixedLoss, LamOfOneIsTheUnmixedLossBitForBit) {
  OpHarness h;
  FeedMixed(h);
  h.Feed("ones", {kRows}, std::vector<float>(kRows, 1.f));
  h.Feed("dloss", {}, {1.f});
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"}));
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label", "label_b", "ones"}, {"prob1", "loss1"}));
  EXPECT_EQ(h.Fetch("loss1"), h.Fetch("loss"));
  h.Run(MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss"}, {"dX"}));
  h.Run(MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss", "label_b", "ones"},
                     {"dX1"}));
  EXPECT_EQ(h.Fetch("dX1"), h.Fetch("dX"));
}

TEST(SoftmaxMixedLoss, TheGradientMakerPassesTheMixedTargets) {
  GradientHelper helper(MixedLoss(0.1f), {"", "loss_grad"}, {"X_grad", "", "", ""});
  const std::vector<OperatorDef> ops = (*GradientRegistry::Find("SoftmaxWithLoss"))(helper);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].inputs,
            (std::vector<std::string>{"prob", "label", "loss_grad", "label_b", "lam"}));
}

TEST(SoftmaxMixedLoss, BadMixedInputsAreValueErrorsNamingThem) {
  OpHarness h;
  FeedMixed(h);
  h.Feed("big_lam", {kRows}, {0.5f, 0.5f, 1.5f, 0.5f, 0.5f, 0.5f});
  h.FeedInt("far_b", {kRows}, {0, 0, 0, 7, 0, 0});
  h.FeedInt("short_b", {2}, {0, 0});
  h.FeedInt("int_lam", {kRows}, kLabel);
  auto loss = [](const std::vector<std::string>& inputs) {
    OperatorDef op = MakeOperator("SoftmaxWithLoss", inputs, {"prob", "loss"});
    op.name = "xent";
    return op;
  };
  EXPECT_ERROR(h.Run(loss({"X", "label", "label_b"})), ValueError,
               "SoftmaxWithLoss 'xent': mixed targets take two inputs after input 1");
  EXPECT_ERROR(h.Run(loss({"X", "label", "label_b", "big_lam"})), ValueError,
               "input 3 'big_lam' row 2 holds 1.5, outside [0, 1]");
  EXPECT_ERROR(h.Run(loss({"X", "label", "far_b", "lam"})), ValueError,
               "input 2 'far_b' row 3 holds class 7, outside [0, 7)");
  EXPECT_ERROR(h.Run(loss({"X", "label", "short_b", "lam"})), ValueError,
               "input 2 'short_b' must be int32[6]");
  EXPECT_ERROR(h.Run(loss({"X", "label", "label_b", "int_lam"})), ValueError,
               "input 3 'int_lam' must be float32[6]");
  const OpSchema* schema = SchemaRegistry::Find("SoftmaxWithLoss");
  EXPECT_ERROR(
      schema->InferShapes(
          loss({"X", "label", "label_b", "lam"}),
          {{{6, 7}}, {{6}, DataType::kInt32}, {{6}, DataType::kInt32}, {{5}, DataType::kFloat32}}),
      ValueError, "input 3 'lam' must be float32[6]");
}

}  // namespace
}  // namespace crossbow::testing
