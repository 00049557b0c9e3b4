#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using Tag = dnnl::memory::format_tag;

OperatorDef Pad(int64_t before, int64_t after, const std::string& x = "X") {
  return MakeOperator("ChannelPad", {x}, {"Y"}, {{"before", before}, {"after", after}});
}

OperatorDef Unpad(int64_t before, int64_t after) {
  return MakeOperator("ChannelPadGradient", {"dY"}, {"dX"}, {{"before", before}, {"after", after}});
}

// Row-major [N, C, S] -> [N, before + C + after, S] with zeros in the new channels.
std::vector<float> Padded(const std::vector<float>& x, const Shape& shape, int64_t before,
                          int64_t after) {
  const int64_t n = shape[0], c = shape[1], s = NumElements(shape) / (n * c);
  std::vector<float> y(n * (before + c + after) * s, 0.f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < c * s; ++k)
      y[(i * (before + c + after) + before) * s + k] = x[i * c * s + k];
  }
  return y;
}

// Row-major [N, C, S] -> channels [before, C - after) of it.
std::vector<float> Unpadded(const std::vector<float>& dy, const Shape& shape, int64_t before,
                            int64_t after) {
  const int64_t n = shape[0], c = shape[1], s = NumElements(shape) / (n * c);
  const int64_t kept = c - before - after;
  std::vector<float> dx;
  for (int64_t i = 0; i < n; ++i) {
    auto first = dy.begin() + (i * c + before) * s;
    dx.insert(dx.end(), first, first + kept * s);
  }
  return dx;
}

TEST(ChannelPad, PlainMatchesReference) {
  for (int64_t batch : {1, 2}) {
    OpHarness h;
    h.Feed("X", {batch, 3, 2, 2});
    h.Run(Pad(1, 2));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{batch, 6, 2, 2}));
    EXPECT_EQ(h.Fetch("Y"), Padded(h.Fetch("X"), {batch, 3, 2, 2}, 1, 2));
    EXPECT_TRUE(IsPlain(h, "Y"));
  }
}

TEST(ChannelPad, WholeBlocksStayBlocked) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {2, 16, 3, 3}, Tag::nChw16c);
  h.Run(Pad(0, 16));
  EXPECT_EQ(h.Fetch("Y"), Padded(x, {2, 16, 3, 3}, 0, 16));
  EXPECT_TRUE(HasLayout(h, "Y", Tag::nChw16c));
}

TEST(ChannelPad, PartlyFilledBlocksStayBlocked) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {2, 3, 2, 2}, Tag::nChw8c);
  h.Run(Pad(8, 8));
  EXPECT_EQ(h.Fetch("Y"), Padded(x, {2, 3, 2, 2}, 8, 8));
  EXPECT_TRUE(HasLayout(h, "Y", Tag::nChw8c));
}

TEST(ChannelPad, UnalignedPaddingOfBlockedInputIsPlain) {
  OpHarness h;
  auto x = FeedBlocked(h, "X", {1, 16, 2, 3}, Tag::nChw16c);
  h.Run(Pad(3, 5));
  EXPECT_EQ(h.Fetch("Y"), Padded(x, {1, 16, 2, 3}, 3, 5));
  EXPECT_TRUE(IsPlain(h, "Y"));
}

TEST(ChannelPad, GradientMatchesNumeric) {
  OpHarness h;
  h.Feed("X", {2, 3, 2, 2});
  CheckGradient(h, Pad(2, 1), {0});
}

TEST(ChannelPadGradient, BlockedDy) {
  struct Case {
    Shape dy;
    int64_t before, after;
    Tag tag;
    bool stays_blocked;
  };
  for (const Case& c : {Case{{2, 32, 3, 3}, 0, 16, Tag::nChw16c, true},
                        Case{{1, 24, 2, 2}, 8, 8, Tag::nChw8c, true},
                        Case{{2, 19, 2, 2}, 0, 16, Tag::nChw16c, false},
                        Case{{2, 32, 2, 2}, 5, 11, Tag::nChw16c, false}}) {
    OpHarness h;
    auto dy = FeedBlocked(h, "dY", c.dy, c.tag);
    h.Run(Unpad(c.before, c.after));
    EXPECT_EQ(h.Fetch("dX"), Unpadded(dy, c.dy, c.before, c.after)) << ShapeString(c.dy);
    EXPECT_EQ(HasLayout(h, "dX", c.tag), c.stays_blocked) << ShapeString(c.dy);
  }
}

TEST(ChannelPad, BadInputsAreValueErrors) {
  OpHarness h;
  h.Feed("X", {2, 3, 2, 2});
  h.Feed("V", {6});
  EXPECT_ERROR(h.Run(Pad(-1, 2)), ValueError, "ChannelPad: before and after must be >= 0, got -1");
  EXPECT_ERROR(h.Run(Pad(1, 1, "V")), ValueError, "ChannelPad: input 'V' has shape [6]");
  EXPECT_ERROR(InferShapes(Pad(1, 1), {{6}}), ValueError, "ChannelPad: input 'X' has shape [6]");
  EXPECT_EQ(InferShapes(Pad(1, 2), {{2, 3, 2, 2}})[0].dims, (Shape{2, 6, 2, 2}));
  h.Feed("dY", {2, 4, 2, 2});
  EXPECT_ERROR(h.Run(Unpad(2, 2)), ValueError,
               "ChannelPadGradient: input 'dY' of shape [2, 4, 2, 2] has no channels left");
  EXPECT_ERROR(InferShapes(Unpad(2, 2), {{2, 4, 2, 2}}), ValueError,
               "ChannelPadGradient: input 'dY' of shape [2, 4, 2, 2] has no channels left");
}

}  // namespace
}  // namespace crossbow::testing
