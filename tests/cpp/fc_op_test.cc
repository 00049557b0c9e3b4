#include <gtest/gtest.h>

#include "crossbow/core/precision.h"
#include "operators/dnnl_utils.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

struct FCCase {
  Shape x;
  int64_t m;
  bool bias;
};

const FCCase kCases[] = {
    {{1, 7}, 5, true},          // batch 1
    {{3, 20}, 10, false},       // no bias
    {{3, 20, 2, 2}, 6, true},   // 4-D input, C not a multiple of 16
    {{2, 64, 1, 1}, 10, true},  // global pooling's output
};

OperatorDef FCDef(const FCCase& c, const std::string& x = "X") {
  std::vector<std::string> inputs = {x, "W"};
  if (c.bias) inputs.push_back("b");
  OperatorDef def = MakeOperator("FC", inputs, {"Y"});
  def.name = "fc1";
  return def;
}

void FeedFC(OpHarness& h, const FCCase& c) {
  h.Feed("X", c.x);
  h.Feed("W", {c.m, NumElements(c.x) / c.x[0]});
  if (c.bias) h.Feed("b", {c.m});
}

std::vector<float> NaiveFC(OpHarness& h, const FCCase& c) {
  const std::vector<float> x = h.Fetch("X"), w = h.Fetch("W");
  const std::vector<float> b = c.bias ? h.Fetch("b") : std::vector<float>(c.m, 0.f);
  const int64_t n = c.x[0], k = NumElements(c.x) / n;
  std::vector<float> y(n * c.m);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < c.m; ++o) {
      double sum = b[o];
      for (int64_t j = 0; j < k; ++j) sum += x[i * k + j] * w[o * k + j];
      y[i * c.m + o] = static_cast<float>(sum);
    }
  return y;
}

TEST(FC, ForwardMatchesNaive) {
  for (const FCCase& c : kCases) {
    SCOPED_TRACE(ShapeString(c.x));
    OpHarness h;
    FeedFC(h, c);
    h.Run(FCDef(c));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{c.x[0], c.m}));
    EXPECT_TRUE(h.ws().GetTensor("Y")->is_plain());
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveFC(h, c)), 1e-4f);
    std::vector<TensorShape> in = {{h.ShapeOf("X")}, {h.ShapeOf("W")}};
    if (c.bias) in.push_back({h.ShapeOf("b")});
    EXPECT_EQ(SchemaRegistry::Find("FC")->InferShapes(FCDef(c), in)[0].dims, h.ShapeOf("Y"));
  }
}

TEST(FC, BlockedInputGivesSameResult) {
  for (const FCCase& c : {kCases[2], kCases[3]}) {
    OpHarness h;
    FeedFC(h, c);
    CopyToBlocked(h, "X", "Xb");
    h.Run(FCDef(c, "Xb"));
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveFC(h, c)), 1e-4f);
  }
}

TEST(FC, ANewWeightShapeRebuildsTheSameOperator) {
  OpHarness h;  // which keeps the operator of a def between runs
  for (const FCCase& c : {FCCase{{3, 20}, 10, true}, FCCase{{3, 20}, 6, true}}) {
    FeedFC(h, c);
    h.Run(FCDef(c));
    EXPECT_EQ(h.ShapeOf("Y"), (Shape{3, c.m}));
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveFC(h, c)), 1e-4f);
  }
}

TEST(FC, GradientMatchesNumeric) {
  for (const FCCase& c : kCases) {
    SCOPED_TRACE(ShapeString(c.x));
    OpHarness h;
    FeedFC(h, c);
    std::vector<int> check = {0, 1};
    if (c.bias) check.push_back(2);
    CheckGradient(h, FCDef(c), check);
  }
}

TEST(FCGradient, BlockedInputAndMissingOutputs) {
  const FCCase c = kCases[2];
  OpHarness h;
  FeedFC(h, c);
  h.Feed("dY", {c.x[0], c.m});
  CopyToBlocked(h, "X", "Xb");
  h.Run(MakeOperator("FCGradient", {"X", "W", "dY"}, {"dW", "db", "dX"}));
  h.Run(MakeOperator("FCGradient", {"Xb", "W", "dY"}, {"dW2", "db2", "dX2"}));
  EXPECT_LT(MaxAbsDiff(h.Fetch("dW"), h.Fetch("dW2")), 1e-4f);
  EXPECT_LT(MaxAbsDiff(h.Fetch("db"), h.Fetch("db2")), 1e-4f);
  EXPECT_LT(MaxAbsDiff(h.Fetch("dX"), h.Fetch("dX2")), 1e-4f);
  // dX keeps X's layout, so that the operator before FC gets its gradient as it laid out X.
  EXPECT_TRUE(h.ws().GetTensor("dX")->is_plain());
  EXPECT_EQ(h.ws().GetTensor("dX2")->layout(), h.ws().GetTensor("Xb")->layout());
  h.Run(MakeOperator("FCGradient", {"X", "W", "dY"}, {"dW3", "", ""}));
  EXPECT_EQ(h.Fetch("dW3"), h.Fetch("dW"));
}

// In precision bf16 FC reads X, W and dY as bfloat16 and accumulates in fp32: its results are
// those of the fp32 FC of the rounded tensors, up to summation order, plain X or blocked.
TEST(FC, Bf16EqualsFp32OnTheRoundedInputs) {
  if (!CpuHasBf16()) GTEST_SKIP() << "this CPU has " << CpuIsaName() << ", not AVX512-BF16 or AMX";
  for (const FCCase& c : kCases) {
    for (const bool blocked : {false, true}) {
      if (blocked && c.x.size() != 4) continue;
      SCOPED_TRACE(::testing::Message() << ShapeString(c.x) << (blocked ? " blocked" : ""));
      OpHarness bf16, rounded;
      bf16.context().set_precision(Precision::kBF16);
      FeedFC(bf16, c);
      bf16.Feed("dY", {c.x[0], c.m});
      const std::string x = blocked ? "Xb" : "X";
      if (blocked) CopyToBlocked(bf16, "X", "Xb");
      bf16.Run(FCDef(c, x));
      bf16.Run(MakeOperator("FCGradient", {x, "W", "dY"}, {"dW", c.bias ? "db" : "", "dX"}));
      for (const char* name : {"X", "W", "dY"}) {
        rounded.Feed(name, bf16.ShapeOf(name), bf16.Fetch(name));
        RoundBlobToBf16(rounded, name);
      }
      if (c.bias) rounded.Feed("b", {c.m}, bf16.Fetch("b"));
      rounded.Run(FCDef(c));
      rounded.Run(MakeOperator("FCGradient", {"X", "W", "dY"}, {"dW", c.bias ? "db" : "", "dX"}));
      for (const char* name : {"Y", "dW", "dX"}) {
        EXPECT_LT(MaxAbsDiff(bf16.Fetch(name), rounded.Fetch(name)), 1e-4f) << name;
      }
      EXPECT_EQ(bf16.ws().GetTensor("dX")->layout(), bf16.ws().GetTensor(x)->layout());
      EXPECT_GT(MaxAbsDiff(bf16.Fetch("Y"), NaiveFC(bf16, c)), 1e-5f);  // it did round
    }
  }
}

TEST(FC, BadShapesNameTheOperator) {
  OpHarness h;
  h.Feed("X", {2, 3, 2, 2});
  h.Feed("W", {5, 11});
  h.Feed("b", {5});
  const OperatorDef def = FCDef({{2, 3, 2, 2}, 5, true});
  const std::vector<std::string> parts = {"FC 'fc1'", "'W'", "[5, 11]", "[2, 3, 2, 2]"};
  ExpectValueError([&] { h.Run(def); }, parts);
  const OpSchema* schema = SchemaRegistry::Find("FC");
  ExpectValueError([&] { schema->InferShapes(def, {{{2, 3, 2, 2}}, {{5, 11}}, {{5}}}); }, parts);

  h.Feed("W", {5, 12, 1});
  ExpectValueError([&] { h.Run(def); }, {"FC 'fc1'", "[5, 12, 1]"});
  h.Feed("W", {5, 12});
  h.Feed("b", {4});
  ExpectValueError([&] { h.Run(def); }, {"FC 'fc1'", "'b'", "[4]"});
  h.Feed("dY", {2, 4});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("FCGradient", {"X", "W", "dY"}, {"dW", "", ""}));
      },
      {"FCGradient", "'dY'", "[2, 4]", "[2, 5]"});
}

}  // namespace
}  // namespace crossbow::testing
