#include <gtest/gtest.h>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

TEST(Mul, ScalesEachChannelOfEachImage) {
  for (bool blocked : {false, true}) {
    OpHarness h;
    h.Feed("A", {2, 16, 2, 3});
    h.Feed("B", {2, 16, 1, 1});
    const std::vector<float> a = h.Fetch("A"), b = h.Fetch("B");
    if (blocked) {
      MakeBlocked(h, "A");
      MakeBlocked(h, "B");
    }
    h.Run(MakeOperator("Mul", {"A", "B"}, {"Y"}));
    const std::vector<float> y = h.Fetch("Y");
    ASSERT_EQ(h.ShapeOf("Y"), (Shape{2, 16, 2, 3}));
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(y[i], a[i] * b[i / 6]) << i;
  }
}

TEST(Mul, ScalesByOneValueAndAlignsToTheLastDimensions) {
  OpHarness h;
  h.Feed("A", {2, 3, 4});
  h.Feed("g", {1}, {-2.5f});
  h.Feed("row", {4}, {1.f, 2.f, 3.f, 4.f});
  h.Run(MakeOperator("Mul", {"A", "g"}, {"Y"}));
  h.Run(MakeOperator("Mul", {"A", "row"}, {"Z"}));
  const std::vector<float> a = h.Fetch("A"), y = h.Fetch("Y"), z = h.Fetch("Z");
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(y[i], -2.5f * a[i]);
    EXPECT_EQ(z[i], static_cast<float>(i % 4 + 1) * a[i]);
  }
}

TEST(Mul, GradientMatchesNumeric) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 5, 3, 3}, {2, 5, 1, 1}}, {{2, 3, 4}, {1}}, {{3, 4, 2}, {4, 1}}};
  for (const auto& [a, b] : cases) {
    OpHarness h;
    h.Feed("A", a);
    h.Feed("B", b);
    CheckGradient(h, MakeOperator("Mul", {"A", "B"}, {"Y"}), {0, 1});
  }
}

TEST(Mul, GradientComputesOnlyTheNamedOutputs) {
  OpHarness h;
  h.Feed("A", {2, 4, 3, 3});
  h.Feed("B", {2, 4, 1, 1});
  h.Feed("dY", {2, 4, 3, 3});
  h.Run(MakeOperator("MulGradient", {"A", "B", "dY"}, {"dA", "dB"}));
  const std::vector<float> da = h.Fetch("dA"), db = h.Fetch("dB");
  h.Run(MakeOperator("MulGradient", {"A", "B", "dY"}, {"", "dB_only"}));
  h.Run(MakeOperator("MulGradient", {"A", "B", "dY"}, {"dA_only", ""}));
  EXPECT_EQ(h.Fetch("dB_only"), db);
  EXPECT_EQ(h.Fetch("dA_only"), da);
}

TEST(Mul, RefusesAShapeThatDoesNotBroadcast) {
  OpHarness h;
  h.Feed("A", {2, 4, 3, 3});
  h.Feed("B", {2, 3, 1, 1});
  h.Feed("wide", {1, 2, 4, 3, 3});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("Mul", {"A", "B"}, {"Y"}));
      },
      {"Mul",
       "'B' of shape [2, 3, 1, 1] does not broadcast to input 0 'A' of "
       "shape [2, 4, 3, 3]"});
  ExpectValueError([&] { h.Run(MakeOperator("Mul", {"A", "wide"}, {"Y"})); }, "does not broadcast");
  ExpectValueError(
      [&] {
        InferShapes(MakeOperator("Mul", {"A", "B"}, {"Y"}), {{2, 4, 3, 3}, {4, 3}});
      },
      "does not broadcast");
  EXPECT_EQ(
      InferShapes(MakeOperator("Mul", {"A", "B"}, {"Y"}), {{2, 4, 3, 3}, {2, 4, 1, 1}})[0].dims,
      (Shape{2, 4, 3, 3}));
}

}  // namespace
}  // namespace crossbow::testing
