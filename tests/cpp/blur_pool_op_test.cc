#include <gtest/gtest.h>

#include <tuple>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

// The reference way: pad each plane by one reflected pixel (PyTorch's ReflectionPad2d, numpy's
// "reflect"), then a depthwise 3x3 convolution with [1, 2, 1]^T [1, 2, 1] / 16 at `stride`.
std::vector<float> ReferenceBlurPool(const std::vector<float>& x, const Shape& shape,
                                     int64_t stride) {
  const int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
  const int64_t ph = h + 2, pw = w + 2, oh = (ph - 3) / stride + 1, ow = (pw - 3) / stride + 1;
  const double filter[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};
  auto reflect = [](int64_t p, int64_t n) { return p == 0 ? 1 : (p == n + 1 ? n - 2 : p - 1); };
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p) {
    std::vector<double> padded(ph * pw);
    for (int64_t r = 0; r < ph; ++r) {
      for (int64_t c = 0; c < pw; ++c) {
        padded[r * pw + c] = x[(p * h + reflect(r, h)) * w + reflect(c, w)];
      }
    }
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double sum = 0;
        for (int a = 0; a < 3; ++a) {
          for (int b = 0; b < 3; ++b)
            sum += filter[a][b] * padded[(i * stride + a) * pw + j * stride + b];
        }
        y.push_back(static_cast<float>(sum / 16));
      }
    }
  }
  return y;
}

// Input shape and stride.
class BlurPoolShapes : public ::testing::TestWithParam<std::tuple<Shape, int64_t>> {};

OperatorDef Blur(int64_t stride) {
  return MakeOperator("BlurPool", {"X"}, {"Y"}, {{"stride", stride}});
}

TEST_P(BlurPoolShapes, ForwardMatchesReflectPadThenDepthwiseConvolution) {
  const auto& [shape, stride] = GetParam();
  OpHarness h;
  h.Feed("X", shape, {}, -2.f, 2.f);
  h.Run(Blur(stride));
  const std::vector<float> expected = ReferenceBlurPool(h.Fetch("X"), shape, stride);
  EXPECT_EQ(h.ShapeOf("Y"),
            (Shape{shape[0], shape[1], (shape[2] - 1) / stride + 1, (shape[3] - 1) / stride + 1}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), expected), 1e-6f);
}

TEST_P(BlurPoolShapes, GradientMatchesNumeric) {
  const auto& [shape, stride] = GetParam();
  OpHarness h;
  h.Feed("X", shape, {}, -2.f, 2.f);
  GradCheckOptions options;
  // Every element of the small planes (the edges' reflections too), a spread of the large one.
  const int64_t n = NumElements(shape);
  options.max_elements = static_cast<int>(n <= 400 ? n : 48);
  CheckGradient(h, Blur(stride), {0}, options);
}

INSTANTIATE_TEST_SUITE_P(BlurPool, BlurPoolShapes,
                         ::testing::Values(std::make_tuple(Shape{2, 3, 8, 8}, 2),
                                           std::make_tuple(Shape{1, 2, 7, 5}, 2),
                                           std::make_tuple(Shape{2, 1, 2, 2}, 2),
                                           std::make_tuple(Shape{1, 2, 3, 6}, 1),
                                           std::make_tuple(Shape{1, 1, 10, 9}, 3),
                                           // threads share the planes from 65,536 elements on
                                           std::make_tuple(Shape{2, 8, 64, 72}, 2)));

TEST(BlurPool, KeepsAConstantAndHasNoParameters) {
  OpHarness h;
  h.Feed("X", {1, 2, 6, 6}, std::vector<float>(72, 3.5f));
  const OperatorDef op = MakeOperator("BlurPool", {"X"}, {"Y"});  // stride 2 by default
  h.Run(op);
  EXPECT_EQ(h.Fetch("Y"), std::vector<float>(18, 3.5f));
  EXPECT_EQ(op.inputs.size(), 1u);
}

TEST(BlurPool, BlockedInputGivesThePlainResult) {
  OpHarness h;
  h.Feed("X", {2, 16, 6, 5}, {}, -1.f, 1.f);
  h.Run(Blur(2));
  const std::vector<float> plain = h.Fetch("Y");
  CopyToBlocked(h, "X", "Xb", dnnl::memory::format_tag::nChw16c);
  h.Run(MakeOperator("BlurPool", {"Xb"}, {"Yb"}));
  EXPECT_EQ(h.Fetch("Yb"), plain);
  h.Feed("dY", h.ShapeOf("Y"), {}, -1.f, 1.f);
  h.Run(MakeOperator("BlurPoolGradient", {"X", "dY"}, {"dX"}));
  CopyToBlocked(h, "dY", "dYb", dnnl::memory::format_tag::nChw16c);
  h.Run(MakeOperator("BlurPoolGradient", {"Xb", "dYb"}, {"dXb"}));
  EXPECT_EQ(h.Fetch("dXb"), h.Fetch("dX"));
}

TEST(BlurPool, BadInputsAreValueErrorsNamingTheOperator) {
  OpHarness h;
  h.Feed("flat", {2, 3, 4});
  h.Feed("thin", {1, 1, 1, 4});
  h.Feed("X", {1, 1, 4, 4});
  OperatorDef op = MakeOperator("BlurPool", {"flat"}, {"Y"});
  op.name = "blur";
  EXPECT_ERROR(h.Run(op), ValueError,
               "BlurPool 'blur': input 0 'flat' has shape [2, 3, 4], expected [N, C, H, W] "
               "with H, W >= 2");
  op.inputs = {"thin"};
  EXPECT_ERROR(h.Run(op), ValueError, "input 0 'thin' has shape [1, 1, 1, 4]");
  op.inputs = {"X"};
  op.args["stride"] = int64_t{0};
  EXPECT_ERROR(h.Run(op), ValueError, "BlurPool 'blur': stride must be >= 1, got 0");
  h.Feed("dY", {1, 1, 3, 3});
  EXPECT_ERROR(h.Run(MakeOperator("BlurPoolGradient", {"X", "dY"}, {"dX"})), ValueError, "dY");
}

TEST(BlurPool, ShapeInference) {
  auto out = InferShapes(MakeOperator("BlurPool", {"X"}, {"Y"}), {{8, 64, 111, 111}});
  EXPECT_EQ(out[0].dims, (Shape{8, 64, 56, 56}));
  EXPECT_ERROR(InferShapes(MakeOperator("BlurPool", {"X"}, {"Y"}), {{8, 64, 1, 5}}), ValueError,
               "H, W >= 2");
}

}  // namespace
}  // namespace crossbow::testing
