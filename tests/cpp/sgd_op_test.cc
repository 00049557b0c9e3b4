#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

struct SGDCase {
  bool nesterov;
  double weight_decay;
};

void PrintTo(const SGDCase& c, std::ostream* os) {
  *os << "nesterov=" << c.nesterov << " weight_decay=" << c.weight_decay;
}

class MomentumSGDCases : public ::testing::TestWithParam<SGDCase> {};

TEST_P(MomentumSGDCases, MatchesReferenceOverThreeSteps) {
  const SGDCase c = GetParam();
  const double mu = 0.8;
  const Shape shape = {3, 17};
  OpHarness h;
  h.Feed("w", shape);
  h.Feed("v", shape, std::vector<float>(51, 0.f));
  std::vector<float> w = h.Fetch("w"), v(51, 0.f);
  const OperatorDef op = MakeOperator(
      "MomentumSGD", {"w", "g", "v", "lr"}, {"w", "v"},
      {{"momentum", mu}, {"weight_decay", c.weight_decay}, {"nesterov", int64_t{c.nesterov}}});
  for (int step = 0; step < 3; ++step) {
    const float lr = 0.1f / static_cast<float>(step + 1);
    h.Feed("lr", step == 1 ? Shape{1} : Shape{}, {lr});
    h.Feed("g", shape);
    const std::vector<float> g = h.Fetch("g");
    for (size_t i = 0; i < w.size(); ++i) {
      const float gi = g[i] + static_cast<float>(c.weight_decay) * w[i];
      v[i] = static_cast<float>(mu) * v[i] - lr * gi;
      w[i] += c.nesterov ? static_cast<float>(mu) * v[i] - lr * gi : v[i];
    }
    h.Run(op);
    EXPECT_LT(MaxAbsDiff(h.Fetch("w"), w), 1e-6f) << "step " << step;
    EXPECT_LT(MaxAbsDiff(h.Fetch("v"), v), 1e-6f) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(MomentumSGD, MomentumSGDCases,
                         ::testing::Values(SGDCase{false, 0.0}, SGDCase{true, 0.0},
                                           SGDCase{false, 1e-2}, SGDCase{true, 1e-2}));

TEST(MomentumSGD, DefaultsAreClassicalMomentum) {
  OpHarness h;
  h.Feed("w", {2}, {1.f, -1.f});
  h.Feed("g", {2}, {0.5f, 1.f});
  h.Feed("v", {2}, {1.f, 2.f});
  h.Feed("lr", {1}, {0.1f});
  h.Run(MakeOperator("MomentumSGD", {"w", "g", "v", "lr"}, {"w", "v"}));
  const std::vector<float> v = {0.9f - 0.05f, 1.8f - 0.1f};
  EXPECT_LT(MaxAbsDiff(h.Fetch("v"), v), 1e-6f);
  EXPECT_LT(MaxAbsDiff(h.Fetch("w"), {1.f + v[0], -1.f + v[1]}), 1e-6f);
}

TEST(MomentumSGD, BadInputsThrow) {
  OpHarness h;
  h.Feed("w", {4, 3});
  h.Feed("g", {3, 4});
  h.Feed("v", {4, 3});
  h.Feed("lr", {2}, {0.1f, 0.1f});
  h.Feed("lr1", {1}, {0.1f});
  try {
    h.Run(MakeOperator("MomentumSGD", {"w", "g", "v", "lr1"}, {"w", "v"}));
    FAIL() << "expected a ValueError";
  } catch (const ValueError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("MomentumSGD"), std::string::npos) << what;
    EXPECT_NE(what.find("'g' has shape [3, 4]"), std::string::npos) << what;
    EXPECT_NE(what.find("'w' [4, 3]"), std::string::npos) << what;
  }
  h.Feed("g", {4, 3});
  EXPECT_ERROR(h.Run(MakeOperator("MomentumSGD", {"w", "g", "v", "lr"}, {"w", "v"})), ValueError,
               "MomentumSGD: input 3 'lr' has shape [2]");
  EXPECT_ERROR(h.Run(MakeOperator("MomentumSGD", {"w", "g", "v", "lr1"}, {"w2", "v"})), ValueError,
               "MomentumSGD: output 0 ('w2') must be input 0 ('w')");  // not in place
  const OperatorDef op = MakeOperator("MomentumSGD", {"w", "g", "v", "lr1"}, {"w", "v"});
  EXPECT_ERROR(
      SchemaRegistry::Find("MomentumSGD")->InferShapes(op, {{{4, 3}}, {{4, 3}}, {{4, 4}}, {{1}}}),
      ValueError, "MomentumSGD: input 2 'v' has shape [4, 4]");
}

}  // namespace
}  // namespace crossbow::testing
