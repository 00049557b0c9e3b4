#include <gtest/gtest.h>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

// Zhang et al. 2019, Algorithm 1, with the fast steps replaced by random moves: every k-th
// step the slow weights move alpha of the way to the fast ones, and the fast weights restart
// from them; in between the fast weights are left alone.
TEST(Lookahead, TakesASlowStepEveryKFastSteps) {
  const int k = 3;
  const float alpha = 0.4f;
  OpHarness h;
  h.Feed("w", {40});
  std::vector<float> slow = h.Fetch("w");
  h.Feed("slow", {40}, slow);
  h.Feed("t", {1}, {0.f});
  const OperatorDef op = MakeOperator("Lookahead", {"w", "slow", "t"}, {"w", "slow", "t"},
                                      {{"k", int64_t{k}}, {"alpha", static_cast<double>(alpha)}});
  for (int step = 1; step <= 7; ++step) {
    h.Feed("move", {40});
    std::vector<float> fast = h.Fetch("w");
    const std::vector<float> move = h.Fetch("move");
    for (size_t i = 0; i < fast.size(); ++i) fast[i] += move[i];
    h.Feed("w", {40}, fast);
    h.Run(op);
    if (step % k == 0) {
      for (size_t i = 0; i < fast.size(); ++i) fast[i] = slow[i] += alpha * (fast[i] - slow[i]);
    }
    EXPECT_LT(MaxAbsDiff(h.Fetch("slow"), slow), 1e-6f) << "step " << step;
    EXPECT_LT(MaxAbsDiff(h.Fetch("w"), fast), 1e-6f) << "step " << step;
    EXPECT_EQ(h.Fetch("t")[0], static_cast<float>(step));
  }
}

TEST(Lookahead, BadArgumentsThrow) {
  OpHarness h;
  h.Feed("w", {3});
  h.Feed("slow", {3});
  h.Feed("t", {1}, {0.f});
  const std::vector<std::string> io = {"w", "slow", "t"};
  EXPECT_ERROR(h.Run(MakeOperator("Lookahead", io, io, {{"k", int64_t{0}}})), ValueError,
               "Lookahead: argument 'k' must be >= 1, got 0");
  EXPECT_ERROR(h.Run(MakeOperator("Lookahead", io, io, {{"alpha", 1.5}})), ValueError,
               "Lookahead: argument 'alpha' must be in (0, 1], got 1.5");
  h.Feed("slow", {4});
  EXPECT_ERROR(h.Run(MakeOperator("Lookahead", io, io)), ValueError,
               "Lookahead: input 1 'slow' has shape [4]");
}

}  // namespace
}  // namespace crossbow::testing
