#include <gtest/gtest.h>

#include "crossbow/core/precision.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/conv_test_util.h"
#include "tests/cpp/op_test_util.h"

// Conv and ConvGradient on our own bf16 paths for AMX: MatmulConv (PrefersMatmul) and
// AmxConvWeightGradient (PrefersAmxWeightGradient), each against oneDNN's convolutions.
namespace crossbow::testing {
namespace {

using dnnl::memory;

bool CasePrefersMatmul(const ConvCase& c, bool bias, Precision precision, ConvPass pass, bool amx) {
  const OperatorDef def = ConvDef(c);
  const ConvParams p(def);
  const Shape y = ConvOutputShape(def, p, {c.n, c.c, c.h, c.w},
                                  {c.m, c.c / c.group, c.kernel, c.kernel}, nullptr);
  return PrefersMatmul(p, y, bias, precision, pass, amx);
}

// The rule on a CPU with AMX and without, whichever CPU runs the test.
class MatmulRule : public ::testing::TestWithParam<bool> {};

TEST_P(MatmulRule, MatmulOnlyWhereItPays) {
  const bool amx = GetParam();
  const auto passes = [amx](const ConvCase& c, bool bias = false,
                            Precision precision = Precision::kBF16) {
    return std::vector<bool>{
        CasePrefersMatmul(c, bias, precision, ConvPass::kForward, amx),
        CasePrefersMatmul(c, bias, precision, ConvPass::kBackwardData, amx),
        CasePrefersMatmul(c, bias, precision, ConvPass::kBackwardWeights, amx)};
  };
  // Forward, data gradient, weight gradient; without AMX never.
  const std::vector<bool> none = {false, false, false}, gradients = {false, amx, amx},
                          forward_and_data = {amx, amx, false};
  // 1x1 without padding: the gradients, at any stride and plane.
  EXPECT_EQ(passes(kCases[4]), gradients);
  EXPECT_EQ(passes(kCases[7]), gradients);
  // 3x3: the forward pass and dX on a plane of at most 16 positions; the gradients of a strided
  // one up to 64.
  const ConvCase small = {2, 32, 4, 4, 48, 3, 1, 1, 1, 1, false};
  ConvCase strided = small, strided_wide = small, plane_64 = small, odd = small;
  strided.h = strided.w = 16;
  strided.stride = 2;  // 8x8
  strided_wide.h = strided_wide.w = 17;
  strided_wide.stride = 2;  // 9x9
  plane_64.h = plane_64.w = 8;
  odd.h = 5;  // 5x4
  EXPECT_EQ(passes(small), forward_and_data);
  EXPECT_EQ(passes(strided), gradients);
  EXPECT_EQ(passes(strided_wide), none);
  EXPECT_EQ(passes(plane_64), none);
  EXPECT_EQ(passes(odd), none);
  // Never with a bias, in fp32, dilated, grouped, or a padded 1x1.
  EXPECT_EQ(passes(small, /*bias=*/true), none);
  EXPECT_EQ(passes(small, false, Precision::kFP32), none);
  ConvCase dilated = small, grouped = small, padded = kCases[4];
  dilated.dilation = 2;
  dilated.pad = 2;
  grouped.group = 2;
  padded.pad = 1;
  for (const ConvCase& c : {dilated, grouped, padded}) EXPECT_EQ(passes(c), none);
}

INSTANTIATE_TEST_SUITE_P(Conv, MatmulRule, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Amx" : "NoAmx"; });

// The matrix products give the convolution and its gradients, with X and dY in any layout and
// Y and dX in nhwc: against the convolution path in fp32 (on every CPU) and, where the CPU has
// bf16, in bf16, where both read the same bfloat16 values and differ only in summation order.
// Then Conv and ConvGradient in bf16, told the CPU has AMX (so on any CPU with bf16), run them
// exactly where PrefersMatmul says, and their outputs are the convolution's.
TEST(Conv, MatmulEqualsTheConvolutions) {
  std::vector<Precision> precisions = {Precision::kFP32};
  if (CpuHasBf16()) precisions.push_back(Precision::kBF16);
  ConvCase wide = kCases[7];
  wide.c = 64;
  wide.m = 48;
  const ConvCase cases[] = {
      kCases[4],
      kCases[6],
      kCases[7],
      wide,
      {3, 48, 4, 5, 24, 3, 1, 1, 1, 1, false},  // 3x3 on a small plane, 32 + 16 channels
      {2, 20, 9, 8, 16, 3, 2, 1, 1, 1, false},  // strided, odd sizes, C not a multiple of 16
      {2, 8, 7, 7, 8, 5, 2, 2, 1, 1, false},    // 5x5
      {2, 16, 6, 6, 16, 3, 1, 0, 1, 1, false},  // no padding
  };
  for (const Precision precision : precisions) {
    for (const ConvCase& c : cases) {
      SCOPED_TRACE(::testing::Message() << PrecisionName(precision) << " C=" << c.c << " M=" << c.m
                                        << " k=" << c.kernel << " stride=" << c.stride);
      OpHarness h;
      h.context().set_precision(precision);
      FeedConv(h, c);
      h.Run(ConvDef(c));
      h.Feed("dY", h.ShapeOf("Y"));
      CopyToBlocked(h, "dY", "dYb");
      CopyToBlocked(h, "X", "Xb");
      // The convolution path, on the inputs as the products read them.
      for (const char* name : {"X", "W", "dY"}) {
        if (precision == Precision::kBF16) RoundBlobToBf16(h, name);
      }
      OpHarness reference;
      for (const char* name : {"X", "W", "dY"})
        reference.Feed(name, h.ShapeOf(name), h.Fetch(name));
      reference.Run(ConvDef(c));
      reference.Run(
          MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", "dX"}, ConvDef(c).args));
      const memory::data_type type =
          precision == Precision::kBF16 ? memory::data_type::bf16 : memory::data_type::f32;
      const auto expect_rounding = [&](const char* name, const char* input) {
        if (precision == Precision::kBF16) {
          ExpectBf16RoundingOf(h.Fetch(name), reference.Fetch(name), input);
        } else {
          EXPECT_LT(MaxAbsDiff(h.Fetch(name), reference.Fetch(name)), 1e-4f) << input;
        }
      };
      MatmulConv forward, backward;
      const Shape x_shape = h.ShapeOf("X"), w_shape = h.ShapeOf("W"), y_shape = h.ShapeOf("Y");
      forward.Build(c.stride, c.pad, x_shape, w_shape, y_shape, type, {ConvPass::kForward},
                    &h.context());
      backward.Build(c.stride, c.pad, x_shape, w_shape, y_shape, type,
                     {ConvPass::kBackwardWeights, ConvPass::kBackwardData}, &h.context());
      for (const char* x : {"X", "Xb"}) {
        Tensor* y = h.ws().CreateTensor("Y");
        forward.Forward(*h.ws().GetTensor(x), *h.ws().GetTensor("W"), y, &h.context());
        expect_rounding("Y", x);
        EXPECT_EQ(dnnl_utils::DescOf(*y),
                  memory::desc(dnnl_utils::Dims(h.ShapeOf("Y")), type, memory::format_tag::acdb));
      }
      for (const char* dy : {"dY", "dYb"}) {
        Tensor* dw = h.ws().CreateTensor("dW");
        Tensor* dx = h.ws().CreateTensor("dX");
        backward.Backward(*h.ws().GetTensor("Xb"), *h.ws().GetTensor("W"), *h.ws().GetTensor(dy),
                          dw, dx, &h.context());
        // Products of bfloat16 values are exact in fp32: dW differs by summation order only.
        EXPECT_LT(MaxAbsDiff(h.Fetch("dW"), reference.Fetch("dW")), 1e-4f) << dy;
        expect_rounding("dX", dy);
        EXPECT_EQ(dnnl_utils::DescOf(*dx),
                  memory::desc(dnnl_utils::Dims(h.ShapeOf("X")), type, memory::format_tag::acdb));
      }
      if (precision != Precision::kBF16) continue;
      ConvOp conv(ConvDef(c), &h.ws(), &h.context());
      ConvGradientOp gradient(
          MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", "dX"}, ConvDef(c).args),
          &h.ws(), &h.context());
      conv.set_amx(true);
      gradient.set_amx(true);
      conv.Run();
      gradient.Run();
      expect_rounding("Y", "Conv");
      EXPECT_LT(MaxAbsDiff(h.Fetch("dW"), reference.Fetch("dW")), 1e-4f) << "ConvGradient";
      expect_rounding("dX", "ConvGradient");
      const auto matmul = [&](ConvPass pass) {
        return CasePrefersMatmul(c, false, precision, pass, true);
      };
      EXPECT_EQ(conv.implementation().rfind("matmul:", 0) == 0, matmul(ConvPass::kForward))
          << conv.implementation();
      EXPECT_EQ(gradient.data_implementation().rfind("matmul:", 0) == 0,
                matmul(ConvPass::kBackwardData))
          << gradient.data_implementation();
      EXPECT_EQ(gradient.weights_implementation().rfind("matmul:", 0) == 0,
                matmul(ConvPass::kBackwardWeights))
          << gradient.weights_implementation();
    }
  }
}

TEST(Conv, AmxWeightGradientOnlyWhereItApplies) {
  const auto prefers = [](const ConvCase& c, bool bias, Precision precision) {
    return PrefersAmxWeightGradient(ConvParams(ConvDef(c)), {c.n, c.c, c.h, c.w},
                                    {c.m, c.c / c.group, c.kernel, c.kernel}, bias, precision);
  };
  const ConvCase three = {2, 32, 8, 8, 16, 3, 1, 1, 1, 1, false};
  EXPECT_EQ(prefers(three, false, Precision::kBF16), AmxTilesGranted());
  EXPECT_FALSE(prefers(three, true, Precision::kBF16));
  EXPECT_FALSE(prefers(three, false, Precision::kFP32));
  ConvCase strided = three, unpadded = three, dilated = three, grouped = three, odd_c = three,
           odd_m = three, five = three;
  strided.stride = 2;
  unpadded.pad = 0;
  dilated.dilation = 2;
  dilated.pad = 2;
  grouped.group = 2;
  odd_c.c = 24;
  odd_m.m = 8;
  five.kernel = 5;
  five.pad = 2;
  for (const ConvCase& c : {strided, unpadded, dilated, grouped, odd_c, odd_m, five})
    EXPECT_FALSE(prefers(c, false, Precision::kBF16));
  // One pair of images, rows of 8 + 1, a plane of 72 rounded up to 80 positions, X's 10 + 80 +
  // 9 + 1: (16 x 80 + 100 x 32) x 2 values of 2 bytes.
  EXPECT_EQ(AmxConvWeightGradient::PackBytes({2, 32, 8, 8}, {16, 32, 3, 3}), 17920);
  // Packs past 4 MiB leave the second-level cache: 64 channels at 32x32 take 4.26 MiB at batch
  // 16 and run on oneDNN; at batch 2 they take 0.53 MiB.
  ConvCase wide = three;
  wide.n = 16;
  wide.c = wide.m = 64;
  wide.h = wide.w = 32;
  EXPECT_FALSE(prefers(wide, false, Precision::kBF16));
  wide.n = 2;
  EXPECT_EQ(prefers(wide, false, Precision::kBF16), AmxTilesGranted());
}

// ConvGradient in bf16 on AMX gives the convolution's weight gradient: against the fp32
// convolution path on the same bfloat16 values (products exact in fp32, so they differ in
// summation order only), with dY plain and blocked, rows narrower and wider than the 32
// positions packed at a time, odd sizes and more than one block of channels each side.
TEST(Conv, AmxWeightGradientEqualsTheConvolution) {
  if (!AmxTilesGranted()) GTEST_SKIP() << "needs AMX tiles; this CPU is " << CpuIsaName();
  const ConvCase cases[] = {{3, 16, 5, 7, 32, 3, 1, 1, 1, 1, false},
                            {2, 32, 8, 8, 16, 3, 1, 1, 1, 1, false},
                            {1, 16, 3, 40, 48, 3, 1, 1, 1, 1, false}};
  for (const ConvCase& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << "N=" << c.n << " C=" << c.c << " " << c.h << "x" << c.w << " M=" << c.m);
    OpHarness h;
    h.context().set_precision(Precision::kBF16);
    FeedConv(h, c);
    h.Run(ConvDef(c));
    h.Feed("dY", h.ShapeOf("Y"));
    for (const char* name : {"X", "dY"}) RoundBlobToBf16(h, name);
    CopyToBlocked(h, "dY", "dYb");
    OpHarness reference;
    for (const char* name : {"X", "W", "dY"}) reference.Feed(name, h.ShapeOf(name), h.Fetch(name));
    reference.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", ""}, ConvDef(c).args));
    for (const char* dy : {"dY", "dYb"}) {
      ConvGradientOp amx(
          MakeOperator("ConvGradient", {"X", "W", dy}, {"dW", "", "dX"}, ConvDef(c).args), &h.ws(),
          &h.context());
      amx.Run();
      EXPECT_EQ(amx.weights_implementation(), AmxConvWeightGradient::kImplementation);
      EXPECT_LT(MaxAbsDiff(h.Fetch("dW"), reference.Fetch("dW")), 1e-4f) << dy;
    }
  }
}

}  // namespace
}  // namespace crossbow::testing
