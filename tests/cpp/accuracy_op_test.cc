#include <gtest/gtest.h>

#include <limits>

#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

float RunAccuracy(OpHarness& h, int64_t top_k) {
  h.Run(MakeOperator("Accuracy", {"scores", "label"}, {"accuracy"}, {{"top_k", top_k}}));
  EXPECT_TRUE(h.ShapeOf("accuracy").empty());
  return h.Fetch("accuracy")[0];
}

TEST(Accuracy, TopOneCountsTiesAsMisses) {
  OpHarness h;
  h.Feed("scores", {4, 3},
         {0.1f, 0.7f, 0.2f,    // label 1 is the maximum: hit
          0.5f, 0.5f, 0.0f,    // label 0 ties the maximum: miss
          0.3f, 0.3f, 0.4f,    // label 1 is beaten by class 2: miss
          0.9f, 0.05f, 0.05f}  // label 0: hit
  );
  h.FeedInt("label", {4}, {1, 0, 1, 0});
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), 0.5f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 2), 0.75f);  // row 1 is second of two equals
}

TEST(Accuracy, TopKWithTies) {
  OpHarness h;
  // Row 0: five classes beat class 0. Row 1: four beat class 6 and two tie it, so it is 7th.
  h.Feed("scores", {2, 7},
         {0.f, 1.f, 2.f, 3.f, 4.f, 5.f, -1.f,  //
          9.f, 8.f, 7.f, 6.f, 5.f, 5.f, 5.f});
  h.FeedInt("label", {2}, {0, 6});
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), 0.f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 5), 0.f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 6), 0.5f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 7), 1.f);
}

TEST(Accuracy, RowOfEqualScoresIsAHitOnlyWhenEveryClassCounts) {
  OpHarness h;
  h.Feed("scores", {2, 4}, std::vector<float>(8, 0.25f));
  h.FeedInt("label", {2}, {0, 3});
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), 0.f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 3), 0.f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 4), 1.f);
}

TEST(Accuracy, RowWithANanIsAMissAtEveryK) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpHarness h;
  h.Feed("scores", {4, 3},
         {nan, nan, nan,     // a diverged model: every score NaN
          nan, 0.2f, 0.1f,   // the label's score is NaN
          0.9f, nan, 0.1f,   // the label leads, another class is NaN
          0.7f, 0.2f, 0.1f}  // clean hit
  );
  h.FeedInt("label", {4}, {0, 0, 0, 0});
  for (int64_t k = 1; k <= 3; ++k) EXPECT_FLOAT_EQ(RunAccuracy(h, k), 0.25f) << "top_k " << k;
}

TEST(Accuracy, InfinitiesAreOrdinaryScores) {
  const float inf = std::numeric_limits<float>::infinity();
  OpHarness h;
  h.Feed("scores", {3, 3},
         {inf, 1.f, -inf,    // label 0 leads: hit
          inf, inf, 0.f,     // label 0 ties another +inf: miss at k = 1
          -inf, 0.f, 1.f});  // label 0 is last: miss
  h.FeedInt("label", {3}, {0, 0, 0});
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), 1.f / 3);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 2), 2.f / 3);
}

TEST(Accuracy, MatchesArgmaxOnRandomBlockedScores) {
  OpHarness h;
  const int64_t n = 9, c = 37;
  h.Feed("plain", {n, c});
  const std::vector<float> s = h.Fetch("plain");
  std::vector<int32_t> label(n);
  int hits = 0;
  for (int64_t r = 0; r < n; ++r) {
    label[r] = static_cast<int32_t>((r * 5) % c);
    int64_t best = 0;
    for (int64_t j = 1; j < c; ++j) best = s[r * c + j] > s[r * c + best] ? j : best;
    if (r % 3 == 0) label[r] = static_cast<int32_t>(best);
    hits += label[r] == best;
  }
  h.FeedInt("label", {n}, label);
  dnnl::memory::desc md(dnnl_utils::Dims({n, c}), dnnl::memory::data_type::f32,
                        dnnl::memory::format_tag::AB16b16a);
  dnnl_utils::ReorderTo(*h.ws().GetTensor("plain"), md, h.ws().CreateTensor("scores"),
                        &h.context());
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), static_cast<float>(hits) / n);
}

TEST(Accuracy, BatchOfOne) {
  OpHarness h;
  h.Feed("scores", {1, 3}, {0.2f, 0.3f, 0.5f});
  h.FeedInt("label", {1}, {1});
  EXPECT_FLOAT_EQ(RunAccuracy(h, 1), 0.f);
  EXPECT_FLOAT_EQ(RunAccuracy(h, 2), 1.f);
}

TEST(Accuracy, BadInputsThrow) {
  OpHarness h;
  h.Feed("scores", {2, 3});
  h.FeedInt("label", {2}, {0, 3});
  EXPECT_ERROR(RunAccuracy(h, 1), ValueError, "Accuracy: input 1 'label' row 1 holds class 3");
  h.FeedInt("label", {2}, {0, 2});
  EXPECT_ERROR(RunAccuracy(h, 0), ValueError, "Accuracy: argument 'top_k' must be at least 1");
  h.FeedInt("label", {3}, {0, 1, 2});
  EXPECT_ERROR(RunAccuracy(h, 1), ValueError, "Accuracy: input 1 'label' has shape [3]");
}

}  // namespace
}  // namespace crossbow::testing
