#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using Tag = dnnl::memory::format_tag;

OperatorDef ReshapeTo(std::vector<int64_t> shape) {
  return MakeOperator("Reshape", {"X"}, {"Y"}, {{"shape", shape}});
}

TEST(Flatten, PlainKeepsRowMajorOrder) {
  for (int64_t batch : {1, 3}) {
    OpHarness h;
    h.Feed("X", {batch, 3, 2, 5});
    h.Run(MakeOperator("Flatten", {"X"}, {"Y"}));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{batch, 30}));
    EXPECT_EQ(h.Fetch("Y"), h.Fetch("X"));
    EXPECT_TRUE(IsPlain(h, "Y"));
  }
}

TEST(Flatten, BlockedInputGivesPlainOutput) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {2, 19, 3, 3}, Tag::nChw16c);
  OperatorDef flatten = MakeOperator("Flatten", {"X"}, {"Y"});
  h.Run(flatten);
  h.Run(flatten);
  EXPECT_EQ(h.ShapeOf("Y"), (Shape{2, 171}));
  EXPECT_TRUE(IsPlain(h, "Y"));
  EXPECT_EQ(h.Fetch("Y"), x);
}

TEST(Flatten, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X", {2, 3, 2, 2});
  CheckGradient(h, MakeOperator("Flatten", {"X"}, {"Y"}), {0});
}

TEST(Reshape, KeepsAndInfersDimensions) {
  OpHarness h;
  h.Feed("X", {2, 3, 4});
  h.Run(ReshapeTo({0, -1}));
  EXPECT_EQ(h.ShapeOf("Y"), (Shape{2, 12}));
  EXPECT_EQ(h.Fetch("Y"), h.Fetch("X"));
  EXPECT_EQ(InferShapes(ReshapeTo({4, 0, -1}), {{2, 3, 4}})[0].dims, (Shape{4, 3, 2}));
  EXPECT_EQ(InferShapes(ReshapeTo({-1}), {{2, 3, 4}})[0].dims, (Shape{24}));
}

TEST(Reshape, BlockedInput) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {1, 3, 2, 2}, Tag::nChw8c);
  h.Run(ReshapeTo({3, 4}));
  EXPECT_EQ(h.Fetch("Y"), x);
  EXPECT_TRUE(IsPlain(h, "Y"));
}

TEST(Reshape, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X", {2, 3, 4});
  CheckGradient(h, ReshapeTo({4, -1}), {0});
}

TEST(Reshape, BadShapesAreValueErrors) {
  OpHarness h;
  h.Feed("X", {2, 3, 4});
  EXPECT_ERROR(h.Run(ReshapeTo({5, -1})), ValueError,
               "to shape [5, -1]: the -1 dimension cannot be inferred");
  EXPECT_ERROR(h.Run(ReshapeTo({-1, -1})), ValueError,
               "to shape [-1, -1]: at most one dimension may be -1");
  EXPECT_ERROR(h.Run(ReshapeTo({4, 5})), ValueError, "to shape [4, 5]: element counts differ");
  EXPECT_ERROR(h.Run(ReshapeTo({-2, 12})), ValueError,
               "to shape [-2, 12]: dimensions must be positive");
  EXPECT_ERROR(h.Run(ReshapeTo({2, 3, 4, 0})), ValueError,
               "to shape [2, 3, 4, 0]: 0 keeps dimension 3");
  EXPECT_ERROR(h.Run(MakeOperator("Reshape", {"X"}, {"Y"})), ValueError,
               "Reshape: required argument 'shape' is missing");
  EXPECT_ERROR(InferShapes(ReshapeTo({-1, -1}), {{2, 3, 4}}), ValueError,
               "to shape [-1, -1]: at most one dimension may be -1");
  EXPECT_ERROR(InferShapes(ReshapeTo({7}), {{2, 3, 4}}), ValueError,
               "Reshape: cannot reshape input 'X' of shape [2, 3, 4] to shape [7]");
}

TEST(ReshapeLike, TakesTheShapeOfItsSecondInput) {
  OpHarness h;
  auto dy = FeedBlocked(h, "dY", {2, 16, 1, 1}, Tag::nChw16c);
  h.Feed("X", {2, 4, 4});
  h.Run(MakeOperator("ReshapeLike", {"dY", "X"}, {"dX"}));
  EXPECT_EQ(h.ShapeOf("dX"), (Shape{2, 4, 4}));
  EXPECT_EQ(h.Fetch("dX"), dy);
  h.Feed("Z", {2, 5});
  EXPECT_ERROR(h.Run(MakeOperator("ReshapeLike", {"dY", "Z"}, {"dZ"})), ValueError,
               "ReshapeLike: input 'dY' of shape [2, 16, 1, 1] cannot take the shape of 'Z'");
  EXPECT_ERROR(InferShapes(MakeOperator("ReshapeLike", {"dY", "Z"}, {"dZ"}), {{2, 16}, {2, 5}}),
               ValueError, "ReshapeLike: input 'dY' of shape [2, 16] cannot take the shape of 'Z'");
}

TEST(ReshapeLike, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("dY", {2, 6});
  h.Feed("X", {3, 4});
  CheckGradient(h, MakeOperator("ReshapeLike", {"dY", "X"}, {"dX"}), {0});
}

}  // namespace
}  // namespace crossbow::testing
