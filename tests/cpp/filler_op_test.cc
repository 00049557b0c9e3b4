#include "operators/filler_op.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

const Shape kWeight = {100, 10, 2, 5};  // 10k elements, fan_in 100, fan_out 1000

std::vector<float> RunFill(OpHarness& h, const std::string& type,
                           std::map<std::string, Argument> args, const Shape& shape = kWeight) {
  args["shape"] = std::vector<int64_t>(shape.begin(), shape.end());
  h.Run(MakeOperator(type, {}, {"W"}, args));
  EXPECT_EQ(h.ShapeOf("W"), shape);
  return h.Fetch("W");
}

double Mean(const std::vector<float>& v) {
  double sum = 0;
  for (float x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double Std(const std::vector<float>& v) {
  const double mean = Mean(v);
  double sum = 0;
  for (float x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

TEST(Fillers, ConstantFromShapeOrInput) {
  OpHarness h;
  EXPECT_EQ(RunFill(h, "ConstantFill", {{"value", 2.5}}, {2, 3}), std::vector<float>(6, 2.5f));
  EXPECT_EQ(RunFill(h, "ConstantFill", {}, {4}), std::vector<float>(4, 0.f));
  h.FeedInt("label", {5}, {1, 2, 3, 4, 5});
  h.Run(MakeOperator("ConstantFill", {"label"}, {"ones"}, {{"value", 1.0}}));
  EXPECT_EQ(h.ShapeOf("ones"), Shape{5});
  EXPECT_EQ(h.Fetch("ones"), std::vector<float>(5, 1.f));
}

TEST(Fillers, UniformStatistics) {
  OpHarness h;
  const auto w = RunFill(h, "UniformFill", {{"min", 2.0}, {"max", 4.0}});
  EXPECT_NEAR(Mean(w), 3.0, 0.02);
  EXPECT_NEAR(Std(w), 2.0 / std::sqrt(12.0), 0.01);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), 2.f);
  EXPECT_LT(*std::max_element(w.begin(), w.end()), 4.f);
  const auto d = RunFill(h, "UniformFill", {});
  EXPECT_GE(*std::min_element(d.begin(), d.end()), -1.f);
  EXPECT_LT(*std::max_element(d.begin(), d.end()), 1.f);
}

TEST(Fillers, GaussianStatistics) {
  OpHarness h;
  const auto w = RunFill(h, "GaussianFill", {{"mean", 1.0}, {"std", 2.0}});
  EXPECT_NEAR(Mean(w), 1.0, 0.06);
  EXPECT_NEAR(Std(w), 2.0, 0.04);
}

TEST(Fillers, XavierStatistics) {
  OpHarness h;
  const auto w = RunFill(h, "XavierFill", {});
  const float bound = std::sqrt(3.f / 100.f);
  EXPECT_NEAR(Mean(w), 0.0, 0.003);
  EXPECT_NEAR(Std(w), std::sqrt(1.0 / 100.0), 0.002);
  EXPECT_GE(*std::min_element(w.begin(), w.end()), -bound);
  EXPECT_LE(*std::max_element(w.begin(), w.end()), bound);
}

TEST(Fillers, MSRAFanModes) {
  OpHarness h;
  const auto fan_in = RunFill(h, "MSRAFill", {});
  EXPECT_NEAR(Mean(fan_in), 0.0, 0.005);
  EXPECT_NEAR(Std(fan_in), std::sqrt(2.0 / 100.0), 0.003);
  const auto fan_out = RunFill(h, "MSRAFill", {{"mode", std::string("fan_out")}});
  EXPECT_NEAR(Mean(fan_out), 0.0, 0.002);
  EXPECT_NEAR(Std(fan_out), std::sqrt(2.0 / 1000.0), 0.001);
}

TEST(Fillers, FanDefinitions) {
  EXPECT_EQ(FanIn({64, 3, 7, 7}), 3 * 7 * 7);
  EXPECT_EQ(FanOut({64, 3, 7, 7}), 64 * 7 * 7);
  EXPECT_EQ(FanIn({10, 500}), 500);
  EXPECT_EQ(FanOut({10, 500}), 10);
  EXPECT_EQ(FanIn({17}), 1);
  EXPECT_EQ(FanOut({17}), 17);
}

TEST(Fillers, DeterministicForASeed) {
  for (const std::string type : {"UniformFill", "GaussianFill", "XavierFill", "MSRAFill"}) {
    OpHarness a, b;  // same seed
    const auto first = RunFill(a, type, {}, {3, 17});
    EXPECT_EQ(first, RunFill(b, type, {}, {3, 17})) << type;
    EXPECT_NE(first, RunFill(a, type, {}, {3, 17})) << type << " repeats itself";
  }
}

TEST(Fillers, EmptyShapeFillsNothing) {
  OpHarness h;
  EXPECT_TRUE(RunFill(h, "XavierFill", {}, {0, 3}).empty());
  EXPECT_TRUE(RunFill(h, "MSRAFill", {{"mode", std::string("fan_out")}}, {0}).empty());
}

TEST(Fillers, BadArgumentsThrow) {
  OpHarness h;
  EXPECT_ERROR(h.Run(MakeOperator("UniformFill", {}, {"W"})), ValueError,
               "UniformFill: required argument 'shape' is missing");  // no shape
  EXPECT_ERROR(RunFill(h, "UniformFill", {{"min", 1.0}, {"max", 1.0}}), ValueError,
               "UniformFill: argument 'min' (1) must be below 'max' (1)");
  EXPECT_ERROR(RunFill(h, "GaussianFill", {{"std", 0.0}}), ValueError,
               "GaussianFill: argument 'std' must be positive");
  EXPECT_ERROR(RunFill(h, "MSRAFill", {{"mode", std::string("fan_avg")}}), ValueError,
               "MSRAFill: argument 'mode' must be 'fan_in' or 'fan_out', got 'fan_avg'");
  EXPECT_ERROR(
      h.Run(MakeOperator("ConstantFill", {}, {"W"}, {{"shape", std::vector<int64_t>{-1}}})),
      ValueError, "ConstantFill: argument 'shape' [-1] has a negative dimension");
}

TEST(Fillers, ShapeInference) {
  const OperatorDef op =
      MakeOperator("XavierFill", {}, {"W"}, {{"shape", std::vector<int64_t>{8, 3, 3, 3}}});
  auto out = SchemaRegistry::Find("XavierFill")->InferShapes(op, {});
  EXPECT_EQ(out[0].dims, (Shape{8, 3, 3, 3}));
  EXPECT_EQ(out[0].dtype, DataType::kFloat32);
  const OperatorDef like = MakeOperator("ConstantFill", {"X"}, {"Y"});
  out = SchemaRegistry::Find("ConstantFill")->InferShapes(like, {{{4, 2}, DataType::kInt32}});
  EXPECT_EQ(out[0].dims, (Shape{4, 2}));
  EXPECT_EQ(out[0].dtype, DataType::kFloat32);
}

}  // namespace
}  // namespace crossbow::testing
