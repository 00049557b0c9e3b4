#include "operators/conv_op.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "crossbow/core/precision.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/conv_test_util.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

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
