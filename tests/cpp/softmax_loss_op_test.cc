#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

// Row-wise softmax and mean cross-entropy against q = (1 - e) onehot + e / c in double, written
// the textbook way: -sum_j q[j] log p[j].
void ReferenceSoftmaxLoss(const std::vector<float>& x, const std::vector<int32_t>& label, int64_t n,
                          int64_t c, std::vector<float>* prob, float* loss, double e = 0) {
  prob->resize(n * c);
  double total = 0;
  for (int64_t r = 0; r < n; ++r) {
    double max = x[r * c];
    for (int64_t j = 0; j < c; ++j) max = std::max(max, double{x[r * c + j]});
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(x[r * c + j] - max);
    for (int64_t j = 0; j < c; ++j)
      (*prob)[r * c + j] = static_cast<float>(std::exp(x[r * c + j] - max) / sum);
    for (int64_t j = 0; j < c; ++j) {
      const double q = (j == label[r] ? 1 - e : 0) + e / static_cast<double>(c);
      total -= q * (x[r * c + j] - max - std::log(sum));
    }
  }
  *loss = static_cast<float>(total / static_cast<double>(n));
}

std::vector<int32_t> Labels(int64_t n, int64_t c) {
  std::vector<int32_t> label(n);
  for (int64_t r = 0; r < n; ++r) label[r] = static_cast<int32_t>((r * 7 + 3) % c);
  return label;
}

// Feeds `name` as a copy of blob `from` in a non-plain layout.
void FeedBlocked(OpHarness& h, const std::string& from, const std::string& name,
                 memory::format_tag tag) {
  const Tensor& src = *h.ws().GetTensor(from);
  memory::desc md(dnnl_utils::Dims(src.shape()), memory::data_type::f32, tag);
  Tensor* dst = h.ws().CreateTensor(name);
  dnnl_utils::ReorderTo(src, md, dst, &h.context());
  ASSERT_FALSE(dst->is_plain());
}

// Rows, classes and label_smoothing.
class SoftmaxWithLossShapes : public ::testing::TestWithParam<std::tuple<int64_t, int64_t, float>> {
};

OperatorDef SoftmaxWithLossDef(float smoothing) {
  return MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"},
                      {{"label_smoothing", smoothing}});
}

TEST_P(SoftmaxWithLossShapes, ForwardMatchesReference) {
  const auto [n, c, e] = GetParam();
  OpHarness h;
  h.Feed("X", {n, c}, {}, -3.f, 3.f);
  h.FeedInt("label", {n}, Labels(n, c));
  std::vector<float> prob;
  float loss;
  ReferenceSoftmaxLoss(h.Fetch("X"), Labels(n, c), n, c, &prob, &loss, e);
  h.Run(SoftmaxWithLossDef(e));
  EXPECT_LT(MaxAbsDiff(h.Fetch("prob"), prob), 1e-6f);
  EXPECT_NEAR(h.Fetch("loss")[0], loss, 1e-5f);
  EXPECT_TRUE(h.ShapeOf("loss").empty());
  EXPECT_TRUE(h.ws().GetTensor("prob")->is_plain());
}

TEST_P(SoftmaxWithLossShapes, GradientMatchesNumeric) {
  const auto [n, c, e] = GetParam();
  OpHarness h;
  h.Feed("X", {n, c}, {}, -2.f, 2.f);
  h.FeedInt("label", {n}, Labels(n, c));
  GradCheckOptions options;
  options.outputs = {1};
  options.max_elements = static_cast<int>(n * c);  // every element, off the label too
  // Off the label the gradient is p / N, about 1e-3 at 37 classes: a floor well below that,
  // and a wider step so that the float loss's rounding stays below the floor.
  options.abs_tol = 2e-5f;
  options.step = 5e-2f;
  CheckGradient(h, SoftmaxWithLossDef(e), {0}, options);
}

TEST_P(SoftmaxWithLossShapes, GradientIsProbabilityMinusTargetOverN) {
  const auto [n, c, e] = GetParam();
  OpHarness h;
  h.Feed("X", {n, c}, {}, -2.f, 2.f);
  const std::vector<int32_t> label = Labels(n, c);
  h.FeedInt("label", {n}, label);
  std::vector<float> prob;
  float loss;
  ReferenceSoftmaxLoss(h.Fetch("X"), label, n, c, &prob, &loss, e);
  h.Run(SoftmaxWithLossDef(e));
  h.Feed("dloss", {}, {0.5f});
  h.Run(MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss"}, {"dX"},
                     {{"label_smoothing", e}}));
  const std::vector<float> dx = h.Fetch("dX");
  // d mean_r(-sum_j q[r, j] log p[r, j]) / dX[r, j] = (p[r, j] - q[r, j]) / n, times dloss.
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < c; ++j) {
      const double q = (j == label[r] ? 1.0 - e : 0.0) + e / static_cast<double>(c);
      const double expected = 0.5 * (prob[r * c + j] - q) / n;
      EXPECT_NEAR(dx[r * c + j], expected, 1e-7 + 1e-5 * std::fabs(expected))
          << "row " << r << " class " << j;
    }
  }
}

TEST_P(SoftmaxWithLossShapes, SoftmaxMatchesReferenceAndGradient) {
  const int64_t n = std::get<0>(GetParam()), c = std::get<1>(GetParam());
  OpHarness h;
  h.Feed("X", {n, c}, {}, -3.f, 3.f);
  std::vector<float> prob;
  float loss;
  ReferenceSoftmaxLoss(h.Fetch("X"), Labels(n, c), n, c, &prob, &loss);
  const OperatorDef softmax = MakeOperator("Softmax", {"X"}, {"Y"});
  h.Run(softmax);
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), prob), 1e-6f);
  CheckGradient(h, softmax, {0});
}

INSTANTIATE_TEST_SUITE_P(SoftmaxWithLoss, SoftmaxWithLossShapes,
                         ::testing::Values(std::make_tuple(1, 10, 0.f), std::make_tuple(4, 3, 0.f),
                                           std::make_tuple(5, 37, 0.f), std::make_tuple(4, 3, 0.2f),
                                           std::make_tuple(5, 37, 0.1f)));

TEST(SoftmaxWithLoss, LabelSmoothingOutsideZeroToOneIsAValueError) {
  OpHarness h;
  h.Feed("X", {2, 3});
  h.FeedInt("label", {2}, {0, 1});
  for (float e : {-0.1f, 1.f, 1.5f}) {
    OperatorDef op = SoftmaxWithLossDef(e);
    op.name = "xent";
    EXPECT_ERROR(h.Run(op), ValueError,
                 "SoftmaxWithLoss 'xent': label_smoothing must be in [0, 1), got ");
  }
}

TEST(SoftmaxWithLoss, BlockedLogitsGiveTheSameResult) {
  OpHarness h;
  h.Feed("X", {5, 37}, {}, -3.f, 3.f);
  h.FeedInt("label", {5}, Labels(5, 37));
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"}));
  for (auto tag : {memory::format_tag::ba, memory::format_tag::AB16b16a}) {
    FeedBlocked(h, "X", "Xb", tag);
    h.Run(MakeOperator("SoftmaxWithLoss", {"Xb", "label"}, {"prob_b", "loss_b"}));
    EXPECT_EQ(h.Fetch("prob_b"), h.Fetch("prob"));
    EXPECT_EQ(h.Fetch("loss_b"), h.Fetch("loss"));
    h.Run(MakeOperator("Softmax", {"Xb"}, {"Y"}));
    EXPECT_EQ(h.Fetch("Y"), h.Fetch("prob"));
  }
}

TEST(SoftmaxWithLoss, StableForLargeLogits) {
  OpHarness h;
  h.Feed("X", {2, 3}, {1000.f, 1001.f, 999.f, -1000.f, 0.f, -2000.f});
  h.FeedInt("label", {2}, {1, 2});
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"}));
  std::vector<float> prob;
  float loss;
  ReferenceSoftmaxLoss(h.Fetch("X"), {1, 2}, 2, 3, &prob, &loss);
  EXPECT_LT(MaxAbsDiff(h.Fetch("prob"), prob), 1e-6f);
  EXPECT_NEAR(h.Fetch("loss")[0], loss, 1e-2f);  // row 2 costs 2000 nats
  EXPECT_TRUE(std::isfinite(h.Fetch("loss")[0]));
}

TEST(SoftmaxWithLoss, LossWithoutProbOutput) {
  OpHarness h;
  h.Feed("X", {4, 3});
  h.FeedInt("label", {4}, Labels(4, 3));
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"}));
  h.Run(MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"", "loss_only"}));
  EXPECT_EQ(h.Fetch("loss_only"), h.Fetch("loss"));
}

TEST(SoftmaxWithLoss, GradientScalesWithDloss) {
  OpHarness h;
  h.Feed("prob", {2, 3}, {0.2f, 0.3f, 0.5f, 0.1f, 0.1f, 0.8f});
  h.FeedInt("label", {2}, {2, 0});
  h.Feed("dloss", {}, {4.f});
  h.Run(MakeOperator("SoftmaxWithLossGradient", {"prob", "label", "dloss"}, {"dX"}));
  const std::vector<float> expected = {0.4f, 0.6f, -1.f, -1.8f, 0.2f, 1.6f};
  EXPECT_LT(MaxAbsDiff(h.Fetch("dX"), expected), 1e-6f);
}

TEST(SoftmaxWithLoss, LabelOutOfRangeNamesOpRowAndValue) {
  OpHarness h;
  h.Feed("X", {3, 5});
  h.FeedInt("label", {3}, {0, 5, 1});
  OperatorDef op = MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"});
  op.name = "xent";
  try {
    h.Run(op);
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("SoftmaxWithLoss 'xent'"), std::string::npos) << what;
    EXPECT_NE(what.find("row 1"), std::string::npos) << what;
    EXPECT_NE(what.find("class 5"), std::string::npos) << what;
  }
  h.FeedInt("label", {3}, {0, -1, 1});
  EXPECT_ERROR(h.Run(op), ValueError,
               "SoftmaxWithLoss 'xent': input 1 'label' row 1 holds class -1");
}

TEST(SoftmaxWithLoss, BadInputsThrow) {
  OpHarness h;
  h.Feed("X", {3, 5});
  h.Feed("float_label", {3}, {0.f, 1.f, 2.f});
  h.FeedInt("short_label", {2}, {0, 1});
  h.Feed("X3", {3, 5, 1});
  h.FeedInt("label", {3}, {0, 1, 2});
  for (const auto& [x, label] : std::vector<std::pair<std::string, std::string>>{
           {"X", "float_label"}, {"X", "short_label"}, {"X3", "label"}}) {
    SCOPED_TRACE(x + ", " + label);
    EXPECT_ERROR(h.Run(MakeOperator("SoftmaxWithLoss", {x, label}, {"prob", "loss"})), ValueError,
                 "'" + (x == "X3" ? x : label) + "'");
  }
  h.Feed("Y", {3, 4});
  EXPECT_ERROR(h.Run(MakeOperator("SoftmaxGradient", {"X", "Y"}, {"dX"})), ValueError,
               "SoftmaxGradient: input 1 'Y' has shape [3, 4]");
}

TEST(SoftmaxWithLoss, ShapeInference) {
  const OpSchema* schema = SchemaRegistry::Find("SoftmaxWithLoss");
  ASSERT_NE(schema, nullptr);
  const OperatorDef op = MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"});
  auto out = schema->InferShapes(op, {{{8, 10}}, {{8}, DataType::kInt32}});
  EXPECT_EQ(out[0].dims, (Shape{8, 10}));
  EXPECT_EQ(out[1].dims, Shape{});
  EXPECT_ERROR(schema->InferShapes(op, {{{8, 10}}, {{8}, DataType::kFloat32}}), ValueError,
               "SoftmaxWithLoss: input 1 'label' must hold int32");
  EXPECT_ERROR(schema->InferShapes(op, {{{8, 10}}, {{4}, DataType::kInt32}}), ValueError,
               "SoftmaxWithLoss: input 1 'label' has shape [4]");
}

TEST(SoftmaxWithLoss, GradientThroughProbIsRefused) {
  const OperatorDef op = MakeOperator("SoftmaxWithLoss", {"X", "label"}, {"prob", "loss"});
  GradientHelper helper(op, {"prob_grad", "loss_grad"}, {"X_grad", ""});
  EXPECT_ERROR((*GradientRegistry::Find("SoftmaxWithLoss"))(helper), ValueError,
               "SoftmaxWithLoss: no gradient flows back through output 0 'prob'");
}

}  // namespace
}  // namespace crossbow::testing
