#include "operators/conv_op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "crossbow/core/precision.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

struct ConvCase {
  int64_t n, c, h, w, m, kernel, stride, pad, dilation, group;
  bool bias;
};

const ConvCase kCases[] = {
    {1, 3, 5, 5, 8, 3, 1, 1, 1, 1, true},       // batch 1, first-layer channel count
    {3, 20, 7, 6, 6, 3, 2, 1, 1, 2, false},     // stride 2, pad 1, groups, C not a multiple of 16
    {3, 20, 6, 6, 32, 3, 2, 1, 1, 1, true},     // blocked weights on both sides
    {2, 4, 7, 7, 4, 3, 1, 2, 2, 1, true},       // dilation
    {3, 3, 4, 5, 5, 1, 1, 0, 1, 1, false},      // 1x1
    {2, 32, 16, 15, 32, 3, 1, 1, 1, 1, true},   // Winograd (PrefersWinograd), a partial tile
    {1, 1024, 2, 2, 16, 1, 1, 0, 1, 1, false},  // dW's rows 4 KiB apart (BlockedToPlainCopy)
    {2, 16, 7, 6, 24, 1, 2, 0, 1, 1, false},    // 1x1 stride 2 (PrefersMatmul)
    {2, 16, 16, 15, 16, 3, 1, 1, 1, 1, true},   // Winograd for dW only, direct forward and dX
};

OperatorDef ConvDef(const ConvCase& c, const std::string& x = "X") {
  std::vector<std::string> inputs = {x, "W"};
  if (c.bias) inputs.push_back("b");
  OperatorDef def = MakeOperator("Conv", inputs, {"Y"},
                                 {{"kernel", c.kernel},
                                  {"stride", c.stride},
                                  {"pad", c.pad},
                                  {"dilation", c.dilation},
                                  {"group", c.group}});
  def.name = "conv1";
  return def;
}

void FeedConv(OpHarness& h, const ConvCase& c) {
  h.Feed("X", {c.n, c.c, c.h, c.w});
  h.Feed("W", {c.m, c.c / c.group, c.kernel, c.kernel});
  if (c.bias) h.Feed("b", {c.m});
}

// Direct definition: Y[n, o, y, x] = b[o] + sum over the group's channels and the kernel.
std::vector<float> NaiveConv(OpHarness& h, const ConvCase& c) {
  const std::vector<float> x = h.Fetch("X"), w = h.Fetch("W");
  const std::vector<float> b = c.bias ? h.Fetch("b") : std::vector<float>(c.m, 0.f);
  const int64_t span = c.dilation * (c.kernel - 1) + 1;
  const int64_t ho = (c.h + 2 * c.pad - span) / c.stride + 1;
  const int64_t wo = (c.w + 2 * c.pad - span) / c.stride + 1;
  const int64_t cg = c.c / c.group, mg = c.m / c.group;
  std::vector<float> y(c.n * c.m * ho * wo);
  for (int64_t n = 0; n < c.n; ++n)
    for (int64_t o = 0; o < c.m; ++o)
      for (int64_t i = 0; i < ho; ++i)
        for (int64_t j = 0; j < wo; ++j) {
          double sum = b[o];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ki = 0; ki < c.kernel; ++ki)
              for (int64_t kj = 0; kj < c.kernel; ++kj) {
                const int64_t yi = i * c.stride - c.pad + ki * c.dilation;
                const int64_t xj = j * c.stride - c.pad + kj * c.dilation;
                if (yi < 0 || yi >= c.h || xj < 0 || xj >= c.w) continue;
                const int64_t channel = (o / mg) * cg + ci;
                sum += x[((n * c.c + channel) * c.h + yi) * c.w + xj] *
                       w[((o * cg + ci) * c.kernel + ki) * c.kernel + kj];
              }
          y[((n * c.m + o) * ho + i) * wo + j] = static_cast<float>(sum);
        }
  return y;
}

TEST(Conv, ForwardMatchesNaive) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "N=" << c.n << " C=" << c.c << " M=" << c.m
                                      << " group=" << c.group << " stride=" << c.stride);
    OpHarness h;
    FeedConv(h, c);
    h.Run(ConvDef(c));
    const std::vector<float> expected = NaiveConv(h, c);
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), expected), 1e-4f);
    // Shape inference agrees with the kernel.
    std::vector<TensorShape> in = {{h.ShapeOf("X")}, {h.ShapeOf("W")}};
    if (c.bias) in.push_back({h.ShapeOf("b")});
    EXPECT_EQ(SchemaRegistry::Find("Conv")->InferShapes(ConvDef(c), in)[0].dims, h.ShapeOf("Y"));
    // A second run reuses the cached primitives and gives the same answer.
    h.Run(ConvDef(c));
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), expected), 1e-4f);
  }
}

TEST(Conv, BlockedInputGivesSameResult) {
  for (const ConvCase& c : kCases) {
    OpHarness h;
    FeedConv(h, c);
    CopyToBlocked(h, "X", "Xb");
    h.Run(ConvDef(c, "Xb"));
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveConv(h, c)), 1e-4f);
  }
}

TEST(Conv, GradientMatchesNumeric) {
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "N=" << c.n << " C=" << c.c << " M=" << c.m
                                      << " kernel=" << c.kernel << " stride=" << c.stride);
    OpHarness h;
    FeedConv(h, c);
    std::vector<int> check = {0, 1};
    if (c.bias) check.push_back(2);
    CheckGradient(h, ConvDef(c), check);
  }
}

TEST(ConvGradient, BlockedInputsAndMissingOutputs) {
  const ConvCase c = kCases[2];
  OpHarness h;
  FeedConv(h, c);
  h.Run(ConvDef(c));
  h.Feed("dY", h.ShapeOf("Y"));
  CopyToBlocked(h, "X", "Xb");
  CopyToBlocked(h, "dY", "dYb");
  const auto args = ConvDef(c).args;
  h.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "db", "dX"}, args));
  h.Run(MakeOperator("ConvGradient", {"Xb", "W", "dYb"}, {"dW2", "db2", "dX2"}, args));
  EXPECT_LT(MaxAbsDiff(h.Fetch("dW"), h.Fetch("dW2")), 1e-4f);
  EXPECT_LT(MaxAbsDiff(h.Fetch("db"), h.Fetch("db2")), 1e-4f);
  EXPECT_LT(MaxAbsDiff(h.Fetch("dX"), h.Fetch("dX2")), 1e-4f);
  // The first convolution of a net wants no dX; the weight gradients do not change.
  h.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW3", "", ""}, args));
  EXPECT_EQ(h.Fetch("dW3"), h.Fetch("dW"));
  EXPECT_FALSE(h.ws().HasTensor("dX3"));
  h.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"", "", "dX4"}, args));
  EXPECT_EQ(h.Fetch("dX4"), h.Fetch("dX"));
}

// In precision bf16 a convolution reads X, W and dY as bfloat16 and accumulates in fp32: its
// results are those of the fp32 convolution of the rounded tensors, up to summation order, with
// Y and dX rounded to bfloat16 (dW stays fp32).
TEST(Conv, Bf16EqualsFp32OnTheRoundedInputs) {
  if (!CpuHasBf16()) GTEST_SKIP() << "this CPU has " << CpuIsaName() << ", not AVX512-BF16 or AMX";
  for (const ConvCase& c : kCases) {
    SCOPED_TRACE(::testing::Message() << "N=" << c.n << " C=" << c.c << " M=" << c.m
                                      << " group=" << c.group << " stride=" << c.stride);
    OpHarness bf16, rounded;
    bf16.context().set_precision(Precision::kBF16);
    FeedConv(bf16, c);
    bf16.Run(ConvDef(c));
    bf16.Feed("dY", bf16.ShapeOf("Y"));
    const auto args = ConvDef(c).args;
    bf16.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", "dX"}, args));
    for (const char* name : {"X", "W", "dY"})
      rounded.Feed(name, bf16.ShapeOf(name), bf16.Fetch(name));
    if (c.bias) rounded.Feed("b", {c.m}, bf16.Fetch("b"));
    for (const char* name : {"X", "W", "dY"}) RoundBlobToBf16(rounded, name);
    rounded.Run(ConvDef(c));
    rounded.Run(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", "dX"}, args));
    EXPECT_LT(MaxAbsDiff(bf16.Fetch("dW"), rounded.Fetch("dW")), 1e-4f);
    EXPECT_EQ(bf16.ws().GetTensor("dW")->dtype(), DataType::kFloat32);
    for (const char* name : {"Y", "dX"}) {
      EXPECT_EQ(bf16.ws().GetTensor(name)->dtype(), DataType::kBFloat16) << name;
      ExpectBf16RoundingOf(bf16.Fetch(name), rounded.Fetch(name), name);
    }
    // and they differ from the fp32 convolution of the unrounded inputs by bf16's rounding,
    // whose errors add like a random walk over the terms of each output's sum.
    const double terms = static_cast<double>(c.c / c.group * c.kernel * c.kernel);
    EXPECT_GT(MaxAbsDiff(bf16.Fetch("Y"), NaiveConv(bf16, c)), 1e-4f);
    EXPECT_LT(MaxAbsDiff(bf16.Fetch("Y"), NaiveConv(bf16, c)), 5e-3 * std::sqrt(terms));
  }
}

// A learner's operators keep their primitives when the engine moves the learner to a new
// thread. The primitives must not depend on the thread that built them: oneDNN's own
// scratchpad of its Winograd kernels did, and this crashed.
TEST(Conv, PrimitivesRunOnAnotherThreadThanTheOneThatBuiltThem) {
  const ConvCase c = kCases[5];
  OpHarness h;
  FeedConv(h, c);
  h.Feed("dY", {c.n, c.m, c.h, c.w});
  const auto args = ConvDef(c).args;
  const OperatorDef gradient =
      MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "db", "dX"}, args);
  h.Run(ConvDef(c));
  h.Run(gradient);
  const std::vector<float> dw = h.Fetch("dW"), dx = h.Fetch("dX");
  std::thread([&] {
    h.Run(ConvDef(c));
    h.Run(gradient);
  }).join();
  EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveConv(h, c)), 1e-4f);
  EXPECT_EQ(h.Fetch("dW"), dw);
  EXPECT_EQ(h.Fetch("dX"), dx);
}

constexpr ConvPass kConvPasses[] = {ConvPass::kForward, ConvPass::kBackwardData,
                                    ConvPass::kBackwardWeights};

bool CasePrefersWinograd(const ConvCase& c, ConvPass pass, Precision precision = Precision::kFP32) {
  OperatorDef def = ConvDef(c);
  ConvParams p(def);
  const Shape x = {c.n, c.c, c.h, c.w}, w = {c.m, c.c / c.group, c.kernel, c.kernel};
  return PrefersWinograd(p, x, w, ConvOutputShape(def, p, x, w, nullptr), precision, pass);
}

TEST(Conv, WinogradOnlyWhereItPays) {
  const ConvCase& eligible = kCases[5];
  const ConvCase& weights_only = kCases[8];  // 16 channels
  ConvCase few_channels = eligible, few_tiles = eligible, strided = eligible;
  few_channels.c = 8;
  few_tiles.n = 1;  // 16 tiles of 4x4
  strided.stride = 2;
  for (ConvPass pass : kConvPasses) {
    SCOPED_TRACE(::testing::Message() << "pass " << static_cast<int>(pass));
    EXPECT_TRUE(CasePrefersWinograd(eligible, pass));
    EXPECT_FALSE(CasePrefersWinograd(eligible, pass, Precision::kBF16));  // fp32 only in oneDNN
    EXPECT_EQ(CasePrefersWinograd(weights_only, pass), pass == ConvPass::kBackwardWeights);
    for (const ConvCase& c : kCases) {
      if (&c != &eligible && &c != &weights_only) EXPECT_FALSE(CasePrefersWinograd(c, pass));
    }
    EXPECT_FALSE(CasePrefersWinograd(few_channels, pass));
    EXPECT_FALSE(CasePrefersWinograd(few_tiles, pass));
    EXPECT_FALSE(CasePrefersWinograd(strided, pass));
  }
}

// oneDNN's (or our) name for what each pass of Conv and ConvGradient ran on, for case `c` with
// X, W (and b) and dY fed to `h`.
std::vector<std::pair<ConvPass, std::string>> PassImplementations(OpHarness& h, const ConvCase& c) {
  const OperatorDef def = ConvDef(c);
  ConvOp forward(def, &h.ws(), &h.context());
  forward.Run();
  ConvGradientOp backward(
      MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", c.bias ? "db" : "", "dX"}, def.args),
      &h.ws(), &h.context());
  backward.Run();
  return {{ConvPass::kForward, forward.implementation()},
          {ConvPass::kBackwardData, backward.data_implementation()},
          {ConvPass::kBackwardWeights, backward.weights_implementation()}};
}

// Where oneDNN has Winograd (avx512_core and up), each pass runs it exactly where
// PrefersWinograd picks it for that pass: a regression to direct (conv_op.cc's
// dnnl_unimplemented fallback) would pass every numerical test and lose what Winograd gained.
TEST(Conv, WinogradRunsWherePreferred) {
  const std::string isa = CpuIsaName();
  if (isa.rfind("avx512_core", 0) != 0) {
    GTEST_SKIP() << "oneDNN's Winograd needs avx512_core; it finds " << isa << " here";
  }
  for (const ConvCase& c : {kCases[5], kCases[8]}) {
    SCOPED_TRACE(::testing::Message() << "C " << c.c);
    OpHarness h;
    FeedConv(h, c);
    h.Feed("dY", {c.n, c.m, c.h, c.w});
    for (const auto& [pass, name] : PassImplementations(h, c)) {
      EXPECT_EQ(name.find("wino") != std::string::npos, CasePrefersWinograd(c, pass)) << name;
    }
  }
}

bool CasePrefersMatmul(const ConvCase& c, bool bias, Precision precision, ConvPass pass) {
  const OperatorDef def = ConvDef(c);
  const ConvParams p(def);
  const Shape y = ConvOutputShape(def, p, {c.n, c.c, c.h, c.w},
                                  {c.m, c.c / c.group, c.kernel, c.kernel}, nullptr);
  return PrefersMatmul(p, y, bias, precision, pass);
}

TEST(Conv, MatmulOnlyWhereItPays) {
  const auto passes = [](const ConvCase& c, bool bias = false,
                         Precision precision = Precision::kBF16) {
    return std::vector<bool>{CasePrefersMatmul(c, bias, precision, ConvPass::kForward),
                             CasePrefersMatmul(c, bias, precision, ConvPass::kBackwardData),
                             CasePrefersMatmul(c, bias, precision, ConvPass::kBackwardWeights)};
  };
  // Forward, data gradient, weight gradient.
  const bool amx = CpuHasAmx();
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

// The matrix products give the convolution and its gradients, with X and dY in any layout and
// Y and dX in nhwc: against the convolution path in fp32 (on every CPU) and, where the CPU has
// bf16, in bf16, where both read the same bfloat16 values and differ only in summation order.
// Then Conv and ConvGradient in bf16 run them exactly where PrefersMatmul says.
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
      for (const auto& [pass, name] : PassImplementations(h, c)) {
        EXPECT_EQ(name.rfind("matmul:", 0) == 0, CasePrefersMatmul(c, false, precision, pass))
            << name;
      }
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

TEST(Conv, BadShapesNameTheOperator) {
  ConvCase c = kCases[0];
  OpHarness h;
  h.Feed("X", {1, 4, 5, 5});
  h.Feed("W", {8, 3, 3, 3});
  h.Feed("b", {8});
  const OperatorDef def = ConvDef(c);
  const std::vector<std::string> parts = {"Conv 'conv1'", "'W'", "[8, 3, 3, 3]", "[1, 4, 5, 5]"};
  ExpectValueError([&] { h.Run(def); }, parts);
  const OpSchema* schema = SchemaRegistry::Find("Conv");
  ExpectValueError(
      [&] {
        schema->InferShapes(def, {{{1, 4, 5, 5}}, {{8, 3, 3, 3}}, {{8}}});
      },
      parts);

  h.Feed("W", {8, 4, 3});
  ExpectValueError([&] { h.Run(def); }, {"Conv 'conv1'", "[8, 4, 3]"});
  h.Feed("W", {8, 4, 3, 3});
  h.Feed("b", {7});
  ExpectValueError([&] { h.Run(def); }, {"Conv 'conv1'", "'b'", "[7]"});

  ExpectValueError([&] { h.Run(MakeOperator("Conv", {"X", "W"}, {"Y"})); }, {"kernel"});
  ExpectValueError(
      [&] {
        SchemaRegistry::Find("ConvGradient")
            ->InferShapes(def, {{{1, 4, 5, 5}}, {{8, 4, 3, 3}}, {{1, 8, 4, 4}}});
      },
      {"Conv 'conv1'", "[1, 8, 4, 4]", "[1, 8, 5, 5]"});
}

}  // namespace
}  // namespace crossbow::testing
