#include <gtest/gtest.h>

#include <algorithm>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using Tag = dnnl::memory::format_tag;

std::vector<float> Added(const std::vector<std::vector<float>>& terms) {
  std::vector<float> sum(terms[0].size(), 0.f);
  for (const auto& t : terms) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += t[i];
  }
  return sum;
}

TEST(Add, PlainMatchesReference) {
  OpHarness h;
  h.Feed("A", {1, 5, 3, 2});
  h.Feed("B", {1, 5, 3, 2});
  h.Run(MakeOperator("Add", {"A", "B"}, {"C"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("C"), Added({h.Fetch("A"), h.Fetch("B")})), 1e-6f);
  EXPECT_TRUE(IsPlain(h, "C"));
}

TEST(Add, SameBlockedLayoutStaysBlocked) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {2, 3, 4, 5}, Tag::nChw16c);
  auto b = FeedBlocked(h, "B", {2, 3, 4, 5}, Tag::nChw16c);
  h.Run(MakeOperator("Add", {"A", "B"}, {"C"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("C"), Added({a, b})), 1e-6f);
  EXPECT_TRUE(HasLayout(h, "C", Tag::nChw16c));
}

TEST(Add, MixedLayoutsTakeTheFirstInputsLayout) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {2, 19, 3, 3}, Tag::nChw16c);
  h.Feed("B", {2, 19, 3, 3});
  auto b = h.Fetch("B");
  h.Run(MakeOperator("Add", {"A", "B"}, {"C"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("C"), Added({a, b})), 1e-6f);
  EXPECT_TRUE(HasLayout(h, "C", Tag::nChw16c));
  h.Run(MakeOperator("Add", {"B", "A"}, {"D"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("D"), Added({a, b})), 1e-6f);
  EXPECT_TRUE(IsPlain(h, "D"));
}

TEST(Add, InPlaceOnSecondInputWithAnotherLayout) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {1, 3, 2, 2}, Tag::nChw8c);
  h.Feed("B", {1, 3, 2, 2});
  auto b = h.Fetch("B");
  h.Run(MakeOperator("Add", {"A", "B"}, {"B"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("B"), Added({a, b})), 1e-6f);
  EXPECT_TRUE(HasLayout(h, "B", Tag::nChw8c));
}

TEST(Add, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("A", {2, 3, 2, 2});
  h.Feed("B", {2, 3, 2, 2});
  CheckGradient(h, MakeOperator("Add", {"A", "B"}, {"C"}), {0, 1});
}

TEST(Add, GradientSkipsUnnamedInputs) {
  OperatorDef add = MakeOperator("Add", {"A", "B"}, {"C"});
  GradientHelper helper(add, {"C_grad"}, {"", "B_grad"});
  auto ops = (*GradientRegistry::Find("Add"))(helper);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].type, "Copy");
  EXPECT_EQ(ops[0].inputs, std::vector<std::string>{"C_grad"});
  EXPECT_EQ(ops[0].outputs, std::vector<std::string>{"B_grad"});
}

TEST(Add, DifferentShapesAreValueErrors) {
  OpHarness h;
  h.Feed("A", {2, 3});
  h.Feed("B", {3, 2});
  OperatorDef add = MakeOperator("Add", {"A", "B"}, {"C"});
  try {
    h.Run(add);
    FAIL() << "Add accepted shapes [2, 3] and [3, 2]";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[3, 2]"), std::string::npos) << e.what();
  }
  EXPECT_ERROR(InferShapes(add, {{2, 3}, {3, 2}}), ValueError, "Add: input 1 'B' has shape [3, 2]");
  EXPECT_EQ(InferShapes(add, {{2, 3}, {2, 3}})[0].dims, (Shape{2, 3}));
}

// A values of either sign at least 0.3 from zero, B within 0.1 of it: A + B keeps A's sign and
// stays clear of the ReLU's kink by more than the numeric gradient's step.
void FeedAwayFromTheKink(OpHarness& h, const Shape& shape) {
  h.Feed("A", shape);
  std::vector<float> a = h.Fetch("A");
  for (float& x : a) x = x < 0 ? x - 0.3f : x + 0.3f;
  h.Feed("A", shape, a);
  h.Feed("B", shape, {}, -0.1f, 0.1f);
}

TEST(AddRelu, IsAddThenRelu) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {2, 19, 3, 3}, Tag::nChw16c);
  h.Feed("B", {2, 19, 3, 3});
  std::vector<float> expected = Added({a, h.Fetch("B")});
  for (float& x : expected) x = std::max(x, 0.f);
  h.Run(MakeOperator("AddRelu", {"A", "B"}, {"C"}));
  EXPECT_EQ(h.Fetch("C"), expected);
  EXPECT_TRUE(HasLayout(h, "C", Tag::nChw16c));
  h.Run(MakeOperator("AddRelu", {"A", "B"}, {"B"}));  // in place, B in A's layout
  EXPECT_EQ(h.Fetch("B"), expected);
}

TEST(AddRelu, GradientMatchesNumeric) {
  OpHarness h;
  FeedAwayFromTheKink(h, {2, 3, 2, 2});
  CheckGradient(h, MakeOperator("AddRelu", {"A", "B"}, {"C"}), {0, 1});
}

TEST(AddRelu, GradientOfOneInputIsOneReluGradient) {
  OperatorDef add = MakeOperator("AddRelu", {"A", "B"}, {"C"});
  GradientHelper helper(add, {"C_grad"}, {"", "B_grad"});
  auto ops = (*GradientRegistry::Find("AddRelu"))(helper);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].type, "ReluGradient");
  EXPECT_EQ(ops[0].outputs, std::vector<std::string>{"B_grad"});
}

TEST(Sum, MixedLayoutsMatchReference) {
  OpHarness h;
  h.Feed("X1", {1, 19, 2, 3});
  auto x1 = h.Fetch("X1");
  auto x2 = FeedBlocked(h, "X2", {1, 19, 2, 3}, Tag::nChw16c);
  auto x3 = FeedBlocked(h, "X3", {1, 19, 2, 3}, Tag::nChw8c);
  OperatorDef sum = MakeOperator("Sum", {"X1", "X2", "X3"}, {"Y"});
  h.Run(sum);
  h.Run(sum);  // again with the cached reorders
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), Added({x1, x2, x3})), 1e-5f);
  EXPECT_TRUE(IsPlain(h, "Y"));
}

TEST(Sum, BlockedFirstInputInPlace) {
  OpHarness h;
  auto x1 = FeedBlocked(h, "X1", {2, 16, 2, 2}, Tag::nChw16c);
  h.Feed("X2", {2, 16, 2, 2});
  auto x2 = h.Fetch("X2");
  h.Run(MakeOperator("Sum", {"X1", "X2"}, {"X1"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("X1"), Added({x1, x2})), 1e-6f);
  EXPECT_TRUE(HasLayout(h, "X1", Tag::nChw16c));
}

TEST(Sum, OneInputIsACopy) {
  OpHarness h;
  h.Feed("X", {4, 3});
  h.Run(MakeOperator("Sum", {"X"}, {"Y"}));
  EXPECT_EQ(h.Fetch("Y"), h.Fetch("X"));
}

TEST(Sum, GradientMatchesNumeric) {
  OpHarness h;
  for (const char* x : {"X1", "X2", "X3"}) h.Feed(x, {3, 5});
  CheckGradient(h, MakeOperator("Sum", {"X1", "X2", "X3"}, {"Y"}), {0, 1, 2});
}

TEST(Sum, DifferentShapesAreValueErrors) {
  OpHarness h;
  h.Feed("X1", {2, 3});
  h.Feed("X2", {2, 3});
  h.Feed("X3", {2, 4});
  EXPECT_ERROR(h.Run(MakeOperator("Sum", {"X1", "X2", "X3"}, {"Y"})), ValueError,
               "Sum: input 2 'X3' has shape [2, 4]");
}

TEST(Copy, KeepsLayoutAndValues) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {1, 3, 2, 2}, Tag::nChw16c);
  h.Run(MakeOperator("Copy", {"X"}, {"Y"}));
  EXPECT_EQ(h.Fetch("Y"), x);
  EXPECT_TRUE(HasLayout(h, "Y", Tag::nChw16c));
}

TEST(Copy, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X", {2, 5});
  CheckGradient(h, MakeOperator("Copy", {"X"}, {"Y"}), {0});
}

}  // namespace
}  // namespace crossbow::testing
