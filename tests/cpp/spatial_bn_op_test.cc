#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "operators/dnnl_utils.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

using dnnl::memory;

// Per-channel batch mean and biased variance of [N, C, H, W].
void NaiveStats(const std::vector<float>& x, const Shape& s, std::vector<float>* mean,
                std::vector<float>* var) {
  const int64_t hw = s[2] * s[3], count = s[0] * hw;
  mean->assign(s[1], 0.f);
  var->assign(s[1], 0.f);
  for (int64_t c = 0; c < s[1]; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < s[0]; ++n) {
      for (int64_t i = 0; i < hw; ++i) {
        const double v = x[(n * s[1] + c) * hw + i];
        sum += v;
        sq += v * v;
      }
    }
    (*mean)[c] = static_cast<float>(sum / count);
    (*var)[c] = static_cast<float>(sq / count - (sum / count) * (sum / count));
  }
}

std::vector<float> NaiveNormalize(const std::vector<float>& x, const Shape& s,
                                  const std::vector<float>& scale, const std::vector<float>& bias,
                                  const std::vector<float>& mean, const std::vector<float>& var,
                                  float epsilon) {
  std::vector<float> y(x.size());
  const int64_t hw = s[2] * s[3];
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t c = (i / hw) % s[1];
    y[i] = scale[c] * (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) + bias[c];
  }
  return y;
}

void FeedParams(OpHarness& h, int64_t channels) {
  h.Feed("scale", {channels}, {}, 0.5f, 1.5f);
  h.Feed("bias", {channels});
  h.Feed("rm", {channels});
  h.Feed("rv", {channels}, {}, 0.5f, 2.f);
}

// X of `shape`, the parameters and statistics of its channels, and a dY.
void FeedWithGradient(OpHarness& h, const Shape& shape) {
  h.Feed("X", shape);
  FeedParams(h, shape[1]);
  h.Feed("dY", shape);
}

OperatorDef TrainingBN(std::map<std::string, Argument> args = {}) {
  return MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"},
                      {"Y", "rm", "rv", "saved_mean", "saved_var"}, std::move(args));
}

OperatorDef TrainingBNRelu() {
  return MakeOperator("SpatialBNRelu", {"X", "scale", "bias", "rm", "rv"},
                      {"Y", "rm", "rv", "saved_mean", "saved_var", "mask"});
}

// The layouts SpatialBN runs differently: plain and blocked on oneDNN, channels-last (acdb) on
// ChannelsLastBN.
const memory::format_tag kLayouts[] = {memory::format_tag::nchw, memory::format_tag::nChw16c,
                                       memory::format_tag::acdb};

TEST(SpatialBN, TrainingMatchesReference) {
  for (const Shape& shape : {Shape{1, 3, 4, 5}, Shape{4, 17, 3, 3}, Shape{3, 40, 20, 20}})
    for (const memory::format_tag layout : kLayouts) {
      SCOPED_TRACE(::testing::Message() << ShapeString(shape) << " layout " << int(layout));
      OpHarness h;
      h.Feed("X", shape, {}, -2.f, 3.f);
      FeedParams(h, shape[1]);
      auto x = h.Fetch("X"), scale = h.Fetch("scale"), bias = h.Fetch("bias");
      if (layout != memory::format_tag::nchw) MakeBlocked(h, "X", layout);
      auto rm = h.Fetch("rm"), rv = h.Fetch("rv");
      h.Run(TrainingBN({{"momentum", 0.8}, {"epsilon", 1e-3}}));

      std::vector<float> mean, var;
      NaiveStats(x, shape, &mean, &var);
      EXPECT_LT(MaxAbsDiff(h.Fetch("saved_mean"), mean), 1e-5f);
      EXPECT_LT(MaxAbsDiff(h.Fetch("saved_var"), var), 1e-4f);
      EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), NaiveNormalize(x, shape, scale, bias, mean, var, 1e-3f)),
                1e-4f);
      const float count = static_cast<float>(shape[0] * shape[2] * shape[3]);
      for (int64_t c = 0; c < shape[1]; ++c) {
        rm[c] = 0.8f * rm[c] + 0.2f * mean[c];
        rv[c] = 0.8f * rv[c] + 0.2f * var[c] * count / (count - 1);
      }
      EXPECT_LT(MaxAbsDiff(h.Fetch("rm"), rm), 1e-5f);
      EXPECT_LT(MaxAbsDiff(h.Fetch("rv"), rv), 1e-4f);
    }
}

// A channel whose mean is large against its spread: the variance must not cancel away.
TEST(SpatialBN, VarianceOfAnOffsetChannel) {
  const Shape shape{8, 16, 16, 16};
  for (const memory::format_tag layout : kLayouts) {
    OpHarness h;
    h.Feed("X", shape, {}, 999.f, 1001.f);
    FeedParams(h, shape[1]);
    std::vector<float> mean, var;
    NaiveStats(h.Fetch("X"), shape, &mean, &var);
    if (layout != memory::format_tag::nchw) MakeBlocked(h, "X", layout);
    h.Run(TrainingBN());
    // The variance is 1/3; float32 resolves 1000 to 6e-5.
    EXPECT_LT(MaxAbsDiff(h.Fetch("saved_var"), var), 1e-3f) << int(layout);
  }
}

TEST(SpatialBN, TestModeUsesRunningStatistics) {
  const Shape shape{2, 17, 3, 2};
  for (const memory::format_tag layout : kLayouts) {
    OpHarness h;
    h.Feed("X", shape);
    FeedParams(h, shape[1]);
    h.Feed("saved_mean", {17}, std::vector<float>(17, 42.f));
    auto x = h.Fetch("X"), rm = h.Fetch("rm"), rv = h.Fetch("rv");
    if (layout != memory::format_tag::nchw) MakeBlocked(h, "X", layout);
    h.Run(TrainingBN({{"is_test", 1}}));
    auto expected = NaiveNormalize(x, shape, h.Fetch("scale"), h.Fetch("bias"), rm, rv, 1e-5f);
    EXPECT_LT(MaxAbsDiff(h.Fetch("Y"), expected), 1e-5f);
    EXPECT_EQ(h.Fetch("rm"), rm);
    EXPECT_EQ(h.Fetch("rv"), rv);
    EXPECT_EQ(h.Fetch("saved_mean"), std::vector<float>(17, 42.f));

    h.Run(MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"}, {"Y1"}, {{"is_test", 1}}));
    EXPECT_EQ(h.Fetch("Y1"), h.Fetch("Y"));
  }
}

// SpatialBN's and SpatialBNRelu's.
TEST(SpatialBN, GradientMatchesNumeric) {
  for (const OperatorDef& op : {TrainingBN(), TrainingBNRelu()}) {
    for (const Shape& shape : {Shape{1, 3, 2, 3}, Shape{2, 17, 2, 2}}) {
      SCOPED_TRACE(op.type + " " + ShapeString(shape));
      OpHarness h;
      h.Feed("X", shape);
      FeedParams(h, shape[1]);
      GradCheckOptions options;
      options.step = 2e-3f;
      CheckGradient(h, op, {0, 1, 2}, options);
    }
  }
}

TEST(SpatialBN, BlockedInputKeepsLayout) {
  const Shape shape{2, 20, 3, 3};
  for (const memory::format_tag layout : {kLayouts[1], kLayouts[2]}) {
    OpHarness h;
    FeedWithGradient(h, shape);
    const std::vector<std::string> grads = {"dX", "dscale", "dbias"};
    auto backward = [&](const std::string& suffix) {
      h.Run(MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"},
                         {"Y" + suffix, "rm", "rv", "sm" + suffix, "sv" + suffix}));
      h.Run(MakeOperator("SpatialBNGradient", {"X", "scale", "sm" + suffix, "sv" + suffix, "dY"},
                         {"dX" + suffix, "dscale" + suffix, "dbias" + suffix}));
    };
    backward("_plain");
    MakeBlocked(h, "X", layout);  // dY stays plain: the gradient must reorder it
    backward("_blocked");
    EXPECT_TRUE(HasLayout(h, "Y_blocked", layout));
    EXPECT_TRUE(HasLayout(h, "dX_blocked", layout));
    for (std::string name : {"Y", "sm", "sv", "dX", "dscale", "dbias"}) {
      EXPECT_LT(MaxAbsDiff(h.Fetch(name + "_plain"), h.Fetch(name + "_blocked")), 1e-5f) << name;
    }
  }
}

TEST(SpatialBN, RejectsScaleOfWrongLength) {
  OpHarness h;
  h.Feed("X", {2, 4, 3, 3});
  FeedParams(h, 4);
  h.Feed("scale", {3});
  auto op = TrainingBN();
  op.name = "bn1";
  ExpectValueError([&] { h.Run(op); }, "SpatialBN 'bn1': input 1 'scale' has shape [3]");
  const OpSchema* schema = SchemaRegistry::Find("SpatialBN");
  ExpectValueError(
      [&] {
        schema->InferShapes(op, {{{2, 4, 3, 3}}, {{3}}, {{4}}, {{4}}, {{4}}});
      },
      "[2, 4, 3, 3]");
}

TEST(SpatialBN, RejectsTrainingWithoutStatisticsOutputs) {
  OpHarness h;
  h.Feed("X", {2, 4, 3, 3});
  FeedParams(h, 4);
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"}, {"Y"}));
      },
      "training needs 5 outputs");
  h.Feed("X1", {1, 4, 1, 1});
  ExpectValueError(
      [&] {
        h.Run(MakeOperator("SpatialBN", {"X1", "scale", "bias", "rm", "rv"},
                           {"Y", "rm", "rv", "sm", "sv"}));
      },
      "more than one value per channel");
}

// The fused operator against SpatialBN then Relu (and their gradients), from the same inputs
// in plain and blocked layouts: the same values within float rounding, and some of Y zeroed.
TEST(SpatialBNRelu, MatchesSpatialBNThenRelu) {
  const Shape shape{2, 20, 3, 3};
  std::map<std::string, std::vector<float>> plain;  // results from plain X, the first layout
  for (const memory::format_tag layout : kLayouts) {
    const bool blocked = layout != memory::format_tag::nchw;
    SCOPED_TRACE(::testing::Message() << "layout " << int(layout));
    OpHarness h;
    FeedWithGradient(h, shape);
    if (blocked) MakeBlocked(h, "X", layout);
    const auto rm = h.Fetch("rm"), rv = h.Fetch("rv");
    for (std::string path : {"_a", "_b"}) {
      h.Feed("rm" + path, {shape[1]}, rm);
      h.Feed("rv" + path, {shape[1]}, rv);
    }
    h.Run({MakeOperator("SpatialBN", {"X", "scale", "bias", "rm_a", "rv_a"},
                        {"N", "rm_a", "rv_a", "sm_a", "sv_a"}),
           MakeOperator("Relu", {"N"}, {"Y_a"}),
           MakeOperator("ReluGradient", {"Y_a", "dY"}, {"dN"}),
           MakeOperator("SpatialBNGradient", {"X", "scale", "sm_a", "sv_a", "dN"},
                        {"dX_a", "dscale_a", "dbias_a"}),
           MakeOperator("SpatialBNRelu", {"X", "scale", "bias", "rm_b", "rv_b"},
                        {"Y_b", "rm_b", "rv_b", "sm_b", "sv_b", "mask"}),
           MakeOperator("SpatialBNReluGradient", {"X", "scale", "sm_b", "sv_b", "dY", "mask"},
                        {"dX_b", "dscale_b", "dbias_b"})});
    EXPECT_EQ(h.ws().GetTensor("Y_b")->is_plain(), !blocked);
    for (std::string name : {"Y", "rm", "rv", "sm", "sv", "dX", "dscale", "dbias"}) {
      EXPECT_LT(MaxAbsDiff(h.Fetch(name + "_a"), h.Fetch(name + "_b")), 1e-5f) << name;
    }
    for (std::string name : {"Y_b", "dX_b", "dscale_b", "dbias_b"}) {
      if (!blocked) plain[name] = h.Fetch(name);
      EXPECT_LT(MaxAbsDiff(h.Fetch(name), plain[name]), 1e-5f) << name << " against plain X";
    }
    auto y = h.Fetch("Y_b");
    EXPECT_GT(std::count(y.begin(), y.end(), 0.f), static_cast<long>(y.size() / 4));
    EXPECT_GE(*std::min_element(y.begin(), y.end()), 0.f);

    h.Run({MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"}, {"T_a"}, {{"is_test", 1}}),
           MakeOperator("Relu", {"T_a"}, {"T_a"}),
           MakeOperator("SpatialBNRelu", {"X", "scale", "bias", "rm", "rv"}, {"T_b"},
                        {{"is_test", 1}})});
    EXPECT_LT(MaxAbsDiff(h.Fetch("T_a"), h.Fetch("T_b")), 1e-5f);
  }
}

TEST(SpatialBNRelu, GradientRejectsAMaskOfAnotherLayout) {
  const Shape shape{2, 16, 3, 3};
  OpHarness h;
  FeedWithGradient(h, shape);
  h.Run(TrainingBNRelu());
  MakeBlocked(h, "X");
  auto grad =
      MakeOperator("SpatialBNReluGradient", {"X", "scale", "saved_mean", "saved_var", "dY", "mask"},
                   {"dX", "dscale", "dbias"});
  grad.name = "g";
  ExpectValueError([&] { h.Run(grad); },
                   "SpatialBNReluGradient 'g': input 5 'mask' is not the "
                   "mask of a SpatialBNRelu of X [2, 16, 3, 3]");
}

TEST(SpatialBNRelu, GradientNeedsTheMask) {
  OperatorDef op = TrainingBNRelu();
  op.outputs[5].clear();
  const GradientMaker* maker = GradientRegistry::Find("SpatialBNRelu");
  ExpectValueError(
      [&] {
        (*maker)(GradientHelper(op, {"dY", "", "", "", "", ""}, {"dX"}));
      },
      "saved_mean, saved_var and mask (outputs 3, 4 and 5) named");
}

}  // namespace
}  // namespace crossbow::testing
