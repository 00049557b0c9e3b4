#include <gtest/gtest.h>

#include <cmath>

#include "operators/dnnl_utils.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

// Y == X * mask * scale with a 0/1 mask that keeps about 1 - ratio of the units.
void ExpectInvertedDropout(const std::vector<float>& x, const std::vector<float>& y,
                           const std::vector<float>& mask, float ratio) {
  ASSERT_EQ(x.size(), y.size());
  ASSERT_EQ(x.size(), mask.size());
  double kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(mask[i] == 0.f || mask[i] == 1.f) << mask[i];
    EXPECT_FLOAT_EQ(y[i], x[i] * mask[i] / (1.f - ratio));
    kept += mask[i];
  }
  const double n = static_cast<double>(x.size());
  EXPECT_NEAR(kept / n, 1.0 - ratio, 5 * std::sqrt(ratio * (1 - ratio) / n));  // 5 sigma
}

TEST(Dropout, TrainingKeepsAndScales) {
  for (const Shape& shape : {Shape{1, 3, 20, 20}, Shape{4, 17, 6, 6}}) {
    for (double ratio : {0.2, 0.5}) {
      OpHarness h;
      h.Feed("X", shape);
      h.Run(MakeOperator("Dropout", {"X"}, {"Y", "mask"}, {{"ratio", ratio}}));
      ExpectInvertedDropout(h.Fetch("X"), h.Fetch("Y"), h.Fetch("mask"), ratio);
    }
  }
}

TEST(Dropout, RedrawsMaskEachRun) {
  OpHarness h;
  h.Feed("X", {2, 3, 8, 8});
  auto op = MakeOperator("Dropout", {"X"}, {"Y", "mask"});
  h.Run(op);
  auto first = h.Fetch("mask");
  h.Run(op);
  EXPECT_NE(first, h.Fetch("mask"));
}

TEST(Dropout, TestModePassesThrough) {
  OpHarness h;
  h.Feed("X", {2, 5, 3, 3});
  auto x = h.Fetch("X");
  h.Run(MakeOperator("Dropout", {"X"}, {"Y", "mask"}, {{"is_test", 1}}));
  EXPECT_EQ(h.Fetch("Y"), x);
  h.Run(MakeOperator("Dropout", {"X"}, {"X"}, {{"is_test", 1}}));
  EXPECT_EQ(h.Fetch("X"), x);
  h.Feed("dY", {2, 5, 3, 3});
  auto g = (*GradientRegistry::Find("Dropout"))(
      GradientHelper(MakeOperator("Dropout", {"X"}, {"Y"}, {{"is_test", 1}}), {"dY"}, {"dX"}));
  h.Run(g);
  EXPECT_EQ(h.Fetch("dX"), h.Fetch("dY"));
}

TEST(Dropout, GradientIsMaskedAndScaled) {
  const float ratio = 0.3f;
  OpHarness h;
  h.Feed("X", {2, 17, 4, 4});
  auto op = MakeOperator("Dropout", {"X"}, {"Y", "mask"}, {{"ratio", double{ratio}}});
  h.Run(op);
  h.Feed("dY", {2, 17, 4, 4});
  h.Run((*GradientRegistry::Find("Dropout"))(GradientHelper(op, {"dY", ""}, {"dX"})));
  ExpectInvertedDropout(h.Fetch("dY"), h.Fetch("dX"), h.Fetch("mask"), ratio);
}

TEST(Dropout, BlockedInputWithPlainGradient) {
  const float ratio = 0.5f;
  OpHarness h;
  h.Feed("X", {2, 20, 5, 5});
  auto x = h.Fetch("X");
  MakeBlocked(h, "X");
  h.Run(MakeOperator("Dropout", {"X"}, {"Y", "mask"}));
  EXPECT_FALSE(h.ws().GetTensor("Y")->is_plain());
  EXPECT_FALSE(h.ws().GetTensor("mask")->is_plain());
  auto mask = h.Fetch("mask");
  ExpectInvertedDropout(x, h.Fetch("Y"), mask, ratio);

  h.Feed("dY", {2, 20, 5, 5});  // plain, unlike the mask
  h.Run(MakeOperator("DropoutGradient", {"dY", "mask"}, {"dX"}));
  ExpectInvertedDropout(h.Fetch("dY"), h.Fetch("dX"), mask, ratio);
}

TEST(Dropout, RejectsBadInput) {
  OpHarness h;
  h.Feed("X", {2, 3});
  auto op = MakeOperator("Dropout", {"X"}, {"Y", "mask"}, {{"ratio", 1.0}});
  op.name = "drop1";
  ExpectValueError([&] { h.Run(op); }, "Dropout 'drop1': ratio must be in [0, 1)");
  h.Run(MakeOperator("Dropout", {"X"}, {"Y", "mask"}));
  h.Feed("dY", {3, 2});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("DropoutGradient", {"dY", "mask"}, {"dX"}));
      },
      "'dY' has shape [3, 2], expected [2, 3]");
  auto without_mask = MakeOperator("Dropout", {"X"}, {"Y"});
  GradientHelper g(without_mask, {"dY"}, {"dX"});
  EXPECT_ERROR((*GradientRegistry::Find("Dropout"))(g), ValueError,
               "Dropout: its gradient needs the mask");
}

}  // namespace
}  // namespace crossbow::testing
