#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using Tag = dnnl::memory::format_tag;

// Row-major concatenation of `parts` (with shapes `shapes`) along `axis`.
std::vector<float> Joined(const std::vector<std::vector<float>>& parts,
                          const std::vector<Shape>& shapes, int axis) {
  int64_t outer = 1;
  for (int d = 0; d < axis; ++d) outer *= shapes[0][d];
  std::vector<float> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < parts.size(); ++i) {
      const int64_t inner = static_cast<int64_t>(parts[i].size()) / outer;
      out.insert(out.end(), parts[i].begin() + o * inner, parts[i].begin() + (o + 1) * inner);
    }
  }
  return out;
}

TEST(Concat, ChannelsMatchReference) {
  for (int64_t batch : {1, 2}) {
    OpHarness h;
    std::vector<Shape> shapes{{batch, 3, 2, 2}, {batch, 5, 2, 2}, {batch, 1, 2, 2}};
    h.Feed("X1", shapes[0]);
    h.Feed("X2", shapes[1]);
    h.Feed("X3", shapes[2]);
    h.Run(MakeOperator("Concat", {"X1", "X2", "X3"}, {"Y"}));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{batch, 9, 2, 2}));
    EXPECT_EQ(h.Fetch("Y"), Joined({h.Fetch("X1"), h.Fetch("X2"), h.Fetch("X3")}, shapes, 1));
  }
}

TEST(Concat, OtherAxes) {
  OpHarness h;
  h.Feed("A", {2, 3});
  h.Feed("B", {4, 3});
  h.Feed("C", {2, 5});
  h.Run(MakeOperator("Concat", {"A", "B"}, {"Y0"}, {{"axis", int64_t{0}}}));
  EXPECT_EQ(h.Fetch("Y0"), Joined({h.Fetch("A"), h.Fetch("B")}, {{2, 3}, {4, 3}}, 0));
  h.Run(MakeOperator("Concat", {"A", "C"}, {"Y1"}, {{"axis", int64_t{-1}}}));
  EXPECT_EQ(h.Fetch("Y1"), Joined({h.Fetch("A"), h.Fetch("C")}, {{2, 3}, {2, 5}}, 1));
  EXPECT_TRUE(IsPlain(h, "Y1"));
}

TEST(Concat, BlockedInputs) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {2, 16, 3, 3}, Tag::nChw16c);
  auto b = FeedBlocked(h, "B", {2, 16, 3, 3}, Tag::nChw16c);
  h.Run(MakeOperator("Concat", {"A", "B"}, {"Y"}));
  EXPECT_EQ(h.Fetch("Y"), Joined({a, b}, {{2, 16, 3, 3}, {2, 16, 3, 3}}, 1));
  EXPECT_TRUE(HasLayout(h, "Y", Tag::nChw16c));
}

TEST(Concat, MixedAndPaddedLayouts) {
  OpHarness h;
  auto a = FeedBlocked(h, "A", {2, 3, 2, 2}, Tag::nChw16c);
  h.Feed("B", {2, 5, 2, 2});
  auto b = h.Fetch("B");
  OperatorDef concat = MakeOperator("Concat", {"A", "B"}, {"Y"});
  h.Run(concat);
  h.Run(concat);
  EXPECT_EQ(h.Fetch("Y"), Joined({a, b}, {{2, 3, 2, 2}, {2, 5, 2, 2}}, 1));
}

TEST(Concat, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X1", {2, 3, 2, 2});
  h.Feed("X2", {2, 5, 2, 2});
  h.Feed("X3", {2, 1, 2, 2});
  CheckGradient(h, MakeOperator("Concat", {"X1", "X2", "X3"}, {"Y"}), {0, 1, 2});
}

// ConcatGradient of a blocked dY, into slices of `channels`, against the plain reference.
void CheckBlockedGradient(const std::vector<int64_t>& channels, Tag x_tag) {
  OpHarness h;
  std::vector<Shape> shapes;
  std::vector<std::string> inputs{"dY"}, outputs;
  int64_t total = 0;
  for (size_t i = 0; i < channels.size(); ++i) {
    shapes.push_back({2, channels[i], 2, 3});
    total += channels[i];
    const std::string x = "X" + std::to_string(i);
    FeedBlocked(h, x, shapes.back(), x_tag);
    inputs.push_back(x);
    outputs.push_back("d" + x);
  }
  auto dy = FeedBlocked(h, "dY", {2, total, 2, 3}, Tag::nChw16c);
  h.Run(MakeOperator("ConcatGradient", inputs, outputs));
  std::vector<std::vector<float>> slices;
  for (const auto& name : outputs) {
    slices.push_back(h.Fetch(name));
    EXPECT_TRUE(HasLayout(h, name, x_tag)) << name << " should take its X's layout";
  }
  EXPECT_EQ(Joined(slices, shapes, 1), dy);
}

TEST(ConcatGradient, BlockedDyAlignedSlices) { CheckBlockedGradient({16, 32}, Tag::nChw16c); }

TEST(ConcatGradient, BlockedDyUnalignedSlices) { CheckBlockedGradient({3, 8, 21}, Tag::nChw8c); }

TEST(ConcatGradient, SkipsUnnamedOutputs) {
  OpHarness h;
  h.Feed("X1", {1, 2});
  h.Feed("X2", {1, 3});
  h.Feed("dY", {1, 5}, {1, 2, 3, 4, 5});
  h.Run(MakeOperator("ConcatGradient", {"dY", "X1", "X2"}, {"", "dX2"}));
  EXPECT_EQ(h.Fetch("dX2"), (std::vector<float>{3, 4, 5}));
}

TEST(Concat, MismatchedShapesAreValueErrors) {
  OpHarness h;
  h.Feed("A", {2, 3, 4, 4});
  h.Feed("B", {2, 3, 5, 4});
  OperatorDef concat = MakeOperator("Concat", {"A", "B"}, {"Y"});
  EXPECT_ERROR(h.Run(concat), ValueError, "Concat: input 1 'B' has shape [2, 3, 5, 4]");
  EXPECT_ERROR(InferShapes(concat, {{2, 3, 4, 4}, {2, 3, 5, 4}}), ValueError,
               "Concat: input 1 'B' has shape [2, 3, 5, 4]");
  EXPECT_ERROR(InferShapes(concat, {{2, 3, 4, 4}, {2, 3, 4}}), ValueError,
               "Concat: input 1 'B' has shape [2, 3, 4]");
  EXPECT_EQ(InferShapes(concat, {{2, 3, 4, 4}, {2, 5, 4, 4}})[0].dims, (Shape{2, 8, 4, 4}));
  EXPECT_ERROR(h.Run(MakeOperator("Concat", {"A", "A"}, {"Z"}, {{"axis", int64_t{4}}})), ValueError,
               "Concat: axis 4 is out of range");
  h.Feed("dY", {2, 7, 4, 4});
  EXPECT_ERROR(h.Run(MakeOperator("ConcatGradient", {"dY", "A", "A"}, {"dA1", "dA2"})), ValueError,
               "ConcatGradient: input 0 'dY' has shape [2, 7, 4, 4]");
}

}  // namespace
}  // namespace crossbow::testing
