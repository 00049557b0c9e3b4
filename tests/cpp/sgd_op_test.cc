#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

struct SGDCase {
  bool nesterov;
  double weight_decay;
  bool pytorch = false;
};

void PrintTo(const SGDCase& c, std::ostream* os) {
  *os << "nesterov=" << c.nesterov << " weight_decay=" << c.weight_decay
      << " pytorch=" << c.pytorch;
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
  const OperatorDef op =
      MakeOperator("MomentumSGD", {"w", "g", "v", "lr"}, {"w", "v"},
                   {{"momentum", mu},
                    {"weight_decay", c.weight_decay},
                    {"nesterov", int64_t{c.nesterov}},
                    {"convention", std::string(c.pytorch ? "pytorch" : "caffe2")}});
  for (int step = 0; step < 3; ++step) {
    const float lr = 0.1f / static_cast<float>(step + 1);
    h.Feed("lr", step == 1 ? Shape{1} : Shape{}, {lr});
    h.Feed("g", shape);
    const std::vector<float> g = h.Fetch("g");
    for (size_t i = 0; i < w.size(); ++i) {
      const float gi = g[i] + static_cast<float>(c.weight_decay) * w[i];
      if (c.pytorch) {  // torch.optim.SGD's documented step
        v[i] = static_cast<float>(mu) * v[i] + gi;
        w[i] -= lr * (c.nesterov ? gi + static_cast<float>(mu) * v[i] : v[i]);
      } else {
        v[i] = static_cast<float>(mu) * v[i] - lr * gi;
        w[i] += c.nesterov ? static_cast<float>(mu) * v[i] - lr * gi : v[i];
      }
    }
    h.Run(op);
    EXPECT_LT(MaxAbsDiff(h.Fetch("w"), w), 1e-6f) << "step " << step;
    EXPECT_LT(MaxAbsDiff(h.Fetch("v"), v), 1e-6f) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(MomentumSGD, MomentumSGDCases,
                         ::testing::Values(SGDCase{false, 0.0}, SGDCase{true, 0.0},
                                           SGDCase{false, 1e-2}, SGDCase{true, 1e-2},
                                           SGDCase{false, 1e-2, true}, SGDCase{true, 1e-2, true}));

// The two conventions take the same steps while the rate is constant (caffe2's v is -lr times
// pytorch's) and part at a change: after a drop to lr / 10, caffe2's velocity still holds the old
// rate's steps, pytorch's is rescaled by the new rate.
TEST(MomentumSGD, ConventionsAgreeAtAConstantRateAndPartAtAChange) {
  for (bool nesterov : {false, true}) {
    OpHarness h;
    const Shape shape = {64};
    h.Feed("w", shape);
    const std::vector<float> w0 = h.Fetch("w");
    for (const char* name : {"caffe2", "pytorch"}) {
      h.Feed(std::string("w_") + name, shape, w0);
      h.Feed(std::string("v_") + name, shape, std::vector<float>(64, 0.f));
    }
    auto step = [&](float lr) {
      h.Feed("lr", {1}, {lr});
      h.Feed("g", shape);
      for (const std::string name : {"caffe2", "pytorch"}) {
        h.Run(MakeOperator("MomentumSGD", {"w_" + name, "g", "v_" + name, "lr"},
                           {"w_" + name, "v_" + name},
                           {{"momentum", 0.9},
                            {"weight_decay", 1e-3},
                            {"nesterov", int64_t{nesterov}},
                            {"convention", name}}));
      }
      return RelativeDiff(h.Fetch("w_caffe2"), h.Fetch("w_pytorch"));
    };
    auto moved = [&] { return RelativeDiff(h.Fetch("w_caffe2"), w0); };
    for (int i = 0; i < 5; ++i) EXPECT_LT(step(0.1f), 1e-6) << "nesterov " << nesterov;
    // The parameters moved by far more than the tolerance, so agreement means something.
    EXPECT_GT(moved(), 1e-3);
    const double before = step(0.01f);
    EXPECT_GT(before, 1e-4) << "nesterov " << nesterov << ": the drop changed nothing";
  }
}

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

TEST(MomentumSGD, UnknownConventionThrows) {
  OpHarness h;
  h.Feed("w", {2});
  h.Feed("g", {2});
  h.Feed("v", {2});
  h.Feed("lr", {1}, {0.1f});
  EXPECT_ERROR(h.Run(MakeOperator("MomentumSGD", {"w", "g", "v", "lr"}, {"w", "v"},
                                  {{"convention", std::string("torch")}})),
               ValueError, "argument 'convention' must be caffe2 or pytorch, got 'torch'");
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
