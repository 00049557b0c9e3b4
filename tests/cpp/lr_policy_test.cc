#include "crossbow/train/lr_policy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

LrPolicy Make(const std::string& name, LrPolicyOptions o = {}) {
  o.policy = name;
  return LrPolicy(o);
}

TEST(LrPolicy, CaffeFormulas) {
  LrPolicyOptions o;
  o.base_lr = 0.5;
  o.gamma = 0.1;
  o.power = 2;
  o.step_size = 3;
  o.steps = {2, 5};
  o.max = 10;
  EXPECT_DOUBLE_EQ(Make("fixed", o).At(7), 0.5);
  EXPECT_DOUBLE_EQ(Make("step", o).At(2.9), 0.5);
  EXPECT_DOUBLE_EQ(Make("step", o).At(3), 0.05);
  EXPECT_DOUBLE_EQ(Make("step", o).At(6.5), 0.005);
  EXPECT_DOUBLE_EQ(Make("multistep", o).At(1.99), 0.5);
  EXPECT_DOUBLE_EQ(Make("multistep", o).At(2), 0.05);
  EXPECT_DOUBLE_EQ(Make("multistep", o).At(9), 0.005);
  EXPECT_DOUBLE_EQ(Make("exp", o).At(2), 0.5 * 0.01);
  EXPECT_DOUBLE_EQ(Make("inv", o).At(4), 0.5 * std::pow(1.4, -2.0));
  EXPECT_DOUBLE_EQ(Make("poly", o).At(5), 0.5 * 0.25);
  EXPECT_DOUBLE_EQ(Make("poly", o).At(12), 0.0);
}

TEST(LrPolicy, WarmUpComposesWithAnyPolicy) {
  LrPolicyOptions o;
  o.base_lr = 1;
  o.steps = {1};
  o.warmup = 2;
  o.warmup_start = 0.2;
  LrPolicy p = Make("multistep", o);
  EXPECT_DOUBLE_EQ(p.At(0), 0.2);
  EXPECT_DOUBLE_EQ(p.At(0.5), 0.4);      // factor 0.4 times the fixed part 1
  EXPECT_DOUBLE_EQ(p.At(1), 0.1 * 0.6);  // the step has passed: 0.1 * factor 0.6
  EXPECT_DOUBLE_EQ(p.At(2), 0.1);
}

TEST(LrPolicy, BadOptionsNameTheProblem) {
  auto message = [](const std::string& name, LrPolicyOptions o) {
    o.policy = name;
    try {
      LrPolicy p(o);
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("cosin", {}).find("unknown lr policy 'cosin'; expected"), std::string::npos);
  EXPECT_NE(message("step", {}).find("step_size"), std::string::npos);
  EXPECT_NE(message("multistep", {}).find("at least one step"), std::string::npos);
  LrPolicyOptions unsorted;
  unsorted.steps = {5, 2};
  EXPECT_NE(message("multistep", unsorted).find("ascending"), std::string::npos);
  EXPECT_NE(message("poly", {}).find("max"), std::string::npos);
  LrPolicyOptions short_run;
  short_run.max = 2;
  short_run.warmup = 2;
  for (const char* name : {"cosine", "flatcos", "poly"}) {
    EXPECT_NE(message(name, short_run).find("(--epochs), before its warm-up (--warmup 2)"),
              std::string::npos)
        << message(name, short_run);
  }
}

// Cosine anneals from the end of the warm-up to 0 at max; flatcos holds the base rate for its
// flat share of [0, max] first (fastai's fit_flat_cos), then anneals over the rest.
TEST(LrPolicy, CosineAndFlatCosAfterTheWarmUp) {
  LrPolicyOptions o;
  o.base_lr = 0.8;
  o.max = 12;
  o.warmup = 2;
  o.warmup_start = 0.25;
  const LrPolicy cosine = Make("cosine", o);
  EXPECT_DOUBLE_EQ(cosine.At(0), 0.2);
  EXPECT_DOUBLE_EQ(cosine.At(1), 0.8 * 0.625);  // warm-up factor halfway, on the base rate
  EXPECT_DOUBLE_EQ(cosine.At(2), 0.8);
  EXPECT_DOUBLE_EQ(cosine.At(7), 0.4);  // half way through the cosine
  EXPECT_NEAR(cosine.At(4.5), 0.8 * 0.5 * (1 + std::cos(M_PI * 0.25)), 1e-15);
  EXPECT_DOUBLE_EQ(cosine.At(12), 0.0);
  EXPECT_DOUBLE_EQ(cosine.At(13), 0.0);
  o.flat = 0.5;
  const LrPolicy flatcos = Make("flatcos", o);
  EXPECT_DOUBLE_EQ(flatcos.At(0), 0.2);
  EXPECT_DOUBLE_EQ(flatcos.At(5.9), 0.8);
  EXPECT_DOUBLE_EQ(flatcos.At(9), 0.4);  // half way from 6 to 12
  EXPECT_NEAR(flatcos.At(10.5), 0.8 * 0.5 * (1 + std::cos(M_PI * 0.75)), 1e-15);
  EXPECT_DOUBLE_EQ(flatcos.At(12), 0.0);
  o.flat = 0.1;  // a flat share inside the warm-up: the cosine starts when the warm-up ends
  EXPECT_DOUBLE_EQ(Make("flatcos", o).At(7), 0.4);
}

TEST(LrPolicy, LearnerScalingGrowsTheRateWithTheJobsLearners) {
  for (int n : {1, 2, 8}) {
    for (bool one_model : {false, true}) {
      EXPECT_EQ(LearnerScale("none", n, one_model), 1.0);
      EXPECT_DOUBLE_EQ(LearnerScale("sqrt", n, one_model), std::sqrt(static_cast<double>(n)));
      EXPECT_EQ(LearnerScale("linear", n, one_model), n);
    }
    EXPECT_DOUBLE_EQ(LearnerScale("auto", n, false), std::sqrt(static_cast<double>(n)));
    EXPECT_EQ(LearnerScale("auto", n, true), 1.0);
  }
  EXPECT_THROW(LearnerScale("sqrt", 0, false), ValueError);
  try {
    LearnerScale("sqr", 2, false);
    FAIL() << "an unknown scaling was accepted";
  } catch (const ValueError& e) {
    EXPECT_NE(
        std::string(e.what()).find("unknown learner scaling 'sqr'; expected auto, none, sqrt"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace crossbow
