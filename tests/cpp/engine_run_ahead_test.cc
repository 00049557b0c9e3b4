// Iterate with the next iteration's rate: learners start their next batch while others finish.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/engine.h"
#include "tests/cpp/engine_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

// Twelve iterations at 0.05, 0.04 from iteration 4 (not a drop to half) and 0.01 from 8 (a
// drop that restarts SMA's and EASGD's learners, set between iterations).
double RateAt(int t) { return t < 4 ? 0.05 : t < 8 ? 0.04 : 0.01; }
constexpr int kIterations = 12, kRestart = 8;

TEST(EngineRunAhead, TrainsExactlyAsIteratingOneIterationAtATime) {
  for (const std::string sync : {"sma", "easgd", "localsgd", "diloco", "ssgd", "sgd"}) {
    SCOPED_TRACE(sync);
    const int k = sync == "sgd" ? 1 : 3;
    auto s1 = Source(64, 4), s2 = Source(64, 4);
    Engine stepwise(Spec(true), Options("cpu:0-1", k, sync), s1.get());
    Engine ahead(Spec(true), Options("cpu:0-1", k, sync), s2.get());
    for (int t = 0; t < kIterations; ++t) {
      if (RateAt(t) != stepwise.learning_rate()) stepwise.SetLearningRate(RateAt(t));
      const IterationResult expected = stepwise.Iterate();
      if (t == kRestart) ahead.SetLearningRate(RateAt(t));
      const bool post_next = t + 1 < kIterations && t + 1 != kRestart;
      const IterationResult r = post_next ? ahead.Iterate(RateAt(t + 1)) : ahead.Iterate();
      EXPECT_EQ(r.learner_losses, expected.learner_losses) << "iteration " << t;
      EXPECT_EQ(r.images, expected.images);
    }
    auto a = Snapshot(ahead), b = Snapshot(stepwise);
    ASSERT_EQ(a.size(), b.size());
    for (const auto& [name, tensor] : a) ExpectNear(tensor, b.at(name), 0.f, name);
  }
}

TEST(EngineRunAhead, OnlyIterateMayFollowAnIterationPostedAhead) {
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cpu:0-1", 2), source.get());
  engine.Iterate(0.04);
  EXPECT_EQ(engine.learning_rate(), 0.04);
  const std::string said = "iteration 1 was posted ahead";
  EXPECT_ERROR(engine.SetLearningRate(0.03), Error, said);
  EXPECT_ERROR(engine.Evaluate(source.get()), Error, said);
  EXPECT_ERROR(engine.StateTensors(), Error, said);
  EXPECT_ERROR(engine.DistancesToAverage(), Error, said);
  EXPECT_ERROR(engine.SetLearnersPerDevice(3), Error, said);
  EXPECT_EQ(engine.learners_per_device(), 2);
  engine.Iterate();  // the iteration posted ahead; nothing after it
  EXPECT_EQ(engine.iteration(), 2);
  engine.SetLearningRate(0.03);
  engine.SetLearnersPerDevice(3);
  EXPECT_EQ(engine.Iterate().learner_losses.size(), 3u);
}

TEST(EngineRunAhead, RefusesARateThatRestartsTheLearnersOrIsNotARate) {
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cpu:0-1", 2), source.get());
  EXPECT_ERROR(engine.Iterate(0.01), ValueError, "learning rate 0.01 restarts the learners");
  EXPECT_ERROR(engine.Iterate(-1.0), ValueError, "learning rate must be finite and >= 0");
  EXPECT_EQ(engine.iteration(), 0);  // nothing was taken or trained
  engine.Iterate(0.03);              // not at or below half of 0.05
  engine.Iterate();
  EXPECT_EQ(engine.iteration(), 2);
  EngineOptions never = Options("cpu:0-1", 2);
  never.restart_drop = 0;
  Engine without_restarts(Spec(true), never, source.get());
  without_restarts.Iterate(0.01);
  without_restarts.Iterate();
  EXPECT_EQ(without_restarts.learning_rate(), 0.01);
}

TEST(EngineRunAhead, AFailingSourceStopsTheEngineWithItsMessage) {
  // Two learners: acquires 0 and 1 are iteration 0's, 2 the first of iteration 1's.
  HookedSource source(Source(64, 4), [](int64_t n) {
    if (n == 2) throw std::runtime_error("disk gone");
  });
  Engine engine(Spec(true), Options("cpu:0-1", 2), &source);
  EXPECT_ERROR(engine.Iterate(0.05), std::runtime_error, "disk gone");
  EXPECT_ERROR(engine.Iterate(), Error, "the training source failed: disk gone");
}  // the destructor joins every thread: a hang here fails the test by timeout

TEST(EngineRunAhead, ALearnerFailingAheadFailsTheNextIterate) {
  // One learner, batches of 4 of 16 images; the second batch, iteration 1's, is poisoned.
  std::vector<float> images(16 * 192, 0.5f);
  std::fill_n(images.begin() + 4 * 192, 4 * 192, 3e38f);
  ArraySource source(std::move(images), std::vector<int32_t>(16, 1), {3, 8, 8}, 4);
  Engine engine(Spec(false), Options("cpu:0", 1), &source);
  // The failure stops the engine as soon as it happens: in the call that posted iteration 1, or
  // in the next.
  try {
    engine.Iterate(0.05);
    engine.Iterate();
    FAIL() << "a NaN loss went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("loss is -nan at iteration 1"), std::string::npos)
        << e.what();
  }
  EXPECT_ERROR(engine.Iterate(), Error, "loss is -nan at iteration 1");
}

TEST(EngineRunAhead, AnEngineDestroyedWithAnIterationPostedAheadLetsGoOfItsBatches) {
  HookedSource source(Source(64, 4), [](int64_t) {});
  {
    Engine engine(Spec(true), Options("cpu:0-1", 2), &source);
    engine.Iterate(0.05);
  }
  EXPECT_EQ(source.held(), 0);
}

TEST(EngineRunAhead, TheAutotunersTrialsPostAheadAsTrainingDoesAndStopIdle) {
  const Engine* engine = nullptr;
  int64_t ahead = 0;  // batches taken while the iteration before theirs ran
  HookedSource source(Source(64, 4), [&](int64_t n) {
    // Batch n is of iteration n in the six with one learner, then two an iteration.
    const int64_t iteration = n < 6 ? n : 6 + (n - 6) / 2;
    if (iteration > engine->iteration()) ++ahead;
  });
  Engine tuned(Spec(true), Options("cpu:0-1", 1), &source);
  engine = &tuned;
  AutotunerOptions o;
  o.max_learners = 2;
  o.warmup_iterations = 2;
  o.window_iterations = 4;
  o.window_seconds = 0;  // the iterations counted below
  int64_t seen = 0;
  o.after_iteration = [&](const IterationResult&) { return ++seen == 9; };  // in 2's window
  const AutotuneResult r = Autotuner(o).Run(&tuned);
  // Six iterations with one learner, then 2 of the warm-up and 1 of the window with two: the
  // stop came with iteration 9 posted ahead, which ran before the search stopped.
  EXPECT_EQ(seen, 10);
  EXPECT_EQ(tuned.iteration(), 10);
  EXPECT_EQ(r.images_trained, 6 * 4 + 4 * 8);
  // Ahead: the 2nd warm-up and the 2nd-4th window iterations of one learner (1, 3, 4, 5),
  // then the two batches each of two learners' 2nd warm-up iteration (7) and of iteration 9.
  EXPECT_EQ(ahead, 4 + 2 * 2);
  EXPECT_FALSE(tuned.StateTensors().empty());  // idle: nothing posted ahead
}

}  // namespace
}  // namespace crossbow
