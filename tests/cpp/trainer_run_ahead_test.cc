// The training loop posts each iteration ahead (Engine::Iterate's next rate) where nothing is
// due between it and the one before, and a signal in between loses nothing.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <utility>
#include <vector>

#include "crossbow/train/trainer.h"
#include "tests/cpp/engine_test_util.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

TEST(TrainerRunAhead, PostsEachIterationAheadUnlessSomethingIsDueBeforeIt) {
  TrainerOptions o;
  o.epochs = 2;
  o.log_every = 5;
  o.progress = false;
  const Engine* engine = nullptr;
  std::vector<int64_t> finished;  // the engine's finished iterations at each Acquire
  HookedSource train(Source(64, 4), [&](int64_t) { finished.push_back(engine->iteration()); });
  Trainer trainer(Spec(false), Options("cpu:0-1", 2), &train, nullptr, o);
  engine = &trainer.engine();
  ASSERT_EQ(trainer.Fit().iterations, 16);  // 8 an epoch, two batches each
  ASSERT_EQ(finished.size(), 32u);
  for (int t = 0; t < 16; ++t) {
    // Taken while iteration t - 1 runs, unless a record (every 5 iterations) or the end of the
    // epoch (after 8) comes between.
    const bool ahead = t >= 1 && t % 5 != 0 && t != 8;
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(finished[2 * t + j], ahead ? t - 1 : t) << "iteration " << t << ", batch " << j;
    }
  }
}

TEST(TrainerRunAhead, ASignalWhileAnIterationIsPostedAheadLosesNothing) {
  // Acquire 7 is the second batch of iteration 3, taken while iteration 2 runs.
  auto run = [](const std::string& dir, bool resume, int64_t signal_at) {
    TrainerOptions o;
    o.epochs = 2;
    o.log_every = 100;
    o.progress = false;
    o.checkpoint_dir = dir;
    o.checkpoint_every_epochs = 0;
    o.resume = resume;
    HookedSource train(Source(64, 4), [signal_at](int64_t n) {
      if (n == signal_at) std::raise(SIGTERM);
    });
    Trainer trainer(Spec(true), Options("cpu:0-1", 2), &train, nullptr, o);
    TrainResult r = trainer.Fit();
    return std::make_pair(r, Snapshot(trainer.engine()));
  };
  const auto [whole, whole_state] = run(ScratchDir("run_ahead_whole"), false, -1);
  const std::string dir = ScratchDir("run_ahead_parts");
  const auto [stopped, stopped_state] = run(dir, false, 7);
  EXPECT_EQ(stopped.stop_reason, "signal (SIGTERM)");
  EXPECT_EQ(stopped.iterations, 4);  // the iteration posted ahead ran before the stop
  const auto [resumed, resumed_state] = run(dir, true, -1);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.iterations, whole.iterations);
  ASSERT_EQ(resumed_state.size(), whole_state.size());
  for (const auto& [name, tensor] : whole_state) {
    ExpectNear(resumed_state.at(name), tensor, 0.f, name);
  }
}

}  // namespace
}  // namespace crossbow
