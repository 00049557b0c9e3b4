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
  EXPECT_NE(message("cosine", {}).find("unknown lr policy 'cosine'"), std::string::npos);
  EXPECT_NE(message("step", {}).find("step_size"), std::string::npos);
  EXPECT_NE(message("multistep", {}).find("at least one step"), std::string::npos);
  LrPolicyOptions unsorted;
  unsorted.steps = {5, 2};
  EXPECT_NE(message("multistep", unsorted).find("ascending"), std::string::npos);
  EXPECT_NE(message("poly", {}).find("max"), std::string::npos);
}

}  // namespace
}  // namespace crossbow
