// The training loop when things go wrong or are asked of it mid-run: signals (healthy, stuck,
// twice, during an evaluation), a stalled source, fractional checkpoint intervals; the
// heartbeat a supervisor watches.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <thread>

#include "crossbow/train/checkpoint.h"
#include "crossbow/train/stop_signal.h"
#include "crossbow/train/trainer.h"
#include "crossbow/train/watchdog.h"
#include "engine_test_util.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void BlockForever() {
  for (;;) pause();
}

TrainerOptions Quiet() {
  TrainerOptions o;
  o.progress = false;
  return o;
}

TEST(TrainerFaults, FractionalCheckpointIntervalsWriteFourCheckpointsAnEpoch) {
  TrainerOptions o = Quiet();
  o.epochs = 1;
  o.checkpoint_dir = ScratchDir("quarter");
  o.checkpoint_every_epochs = 0.25;
  const std::string path = CheckpointPath(o.checkpoint_dir);
  std::set<int64_t> written;  // the iteration of every checkpoint seen, each read back whole
  auto look = [&](int64_t) {
    if (fs::exists(path)) written.insert(ReadCheckpoint(path).info.iteration);
  };
  HookedSource train(Source(64, 4), look);  // 16 iterations an epoch
  Trainer(Spec(false), Options("cpu:0", 1), &train, nullptr, o).Fit();
  look(0);
  EXPECT_EQ(written, (std::set<int64_t>{4, 8, 12, 16}));
  fs::remove_all(o.checkpoint_dir);
}

TEST(TrainerFaults, SigtermDuringAnEvaluationCutsItShortAndCheckpoints) {
  TrainerOptions o = Quiet();
  o.epochs = 50;
  o.checkpoint_dir = ScratchDir("sigterm_eval");
  o.checkpoint_every_epochs = 0;
  HookedSource train(Source(32, 4), [](int64_t) {});
  HookedSource test(Source(64, 4), [](int64_t n) {
    if (n == 3) std::raise(SIGTERM);
  });
  TrainResult r = Trainer(Spec(false), Options("cpu:0", 2), &train, &test, o).Fit();
  EXPECT_EQ(r.stop_reason, "signal (SIGTERM)");
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_FALSE(r.test.has_value()) << "the interrupted evaluation has no result";
  EXPECT_EQ(ReadCheckpoint(CheckpointPath(o.checkpoint_dir)).info.iteration, r.iterations);
  fs::remove_all(o.checkpoint_dir);
}

class TrainerDeath : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(TrainerDeath, AStalledSourceIsReportedWithWhatEachThreadWaitsFor) {
  auto run = [] {
    TrainerOptions o = Quiet();
    o.epochs = 10;
    o.stall_timeout_s = 1;
    HookedSource train(Source(64, 4), [](int64_t n) {
      if (n == 5) BlockForever();
    });
    Trainer(Spec(false), Options("cpu:0", 2), &train, nullptr, o).Fit();
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(1),
              "no iteration finished in 1 s \\(--stall-timeout\\)[^\n]*\n"
              "iteration 2: taking learner 1's batch from the training source");
}

TEST_F(TrainerDeath, ASignalThatTheStuckLoopCannotHonourEndsTheProcessAfterTheGrace) {
  auto run = [] {
    TrainerOptions o = Quiet();
    o.epochs = 10;
    o.stall_timeout_s = 0;  // never: the signal alone ends it
    HookedSource train(Source(64, 4), [](int64_t n) {
      if (n != 3) return;
      std::raise(SIGTERM);
      BlockForever();
    });
    Trainer(Spec(false), Options("cpu:0", 1), &train, nullptr, o).Fit();
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(128 + SIGTERM),
              "received SIGTERM, and training did not stop within 5 s");
}

// The grace stretches to four times the longest interval between progress marks: a loop slowed
// down (here 0.4 s a step) is given 1.6 s, not the 0.5 s a quick one gets.
TEST_F(TrainerDeath, TheGraceAfterASignalFollowsTheLoopsPace) {
  auto run = [](double step_s) {
    StopSignalScope signals;
    Watchdog watchdog(0, 0.5, [] { return std::string("(waits)\n"); });
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(std::chrono::duration<double>(step_s));
      watchdog.Progress();
    }
    std::raise(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    _exit(7);  // the loop's own end: the watchdog let it be
  };
  EXPECT_EXIT(run(0.4), ::testing::ExitedWithCode(7), "");
  EXPECT_EXIT(run(0.05), ::testing::ExitedWithCode(128 + SIGTERM), "did not stop within");
}

// A process stopped for longer than the stall timeout (SIGSTOP, ^Z) and continued is not stuck.
TEST_F(TrainerDeath, TimeSpentSuspendedIsNotAStall) {
  auto run = [] {
    Watchdog watchdog(1, 5, [] { return std::string("(waits)\n"); });
    auto steps = [&watchdog] {
      for (int i = 0; i < 5; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        watchdog.Progress();
      }
    };
    steps();
    if (fork() == 0) {  // continues its parent 3 s after it stopped itself
      std::this_thread::sleep_for(std::chrono::seconds(3));
      kill(getppid(), SIGCONT);
      _exit(0);
    }
    std::raise(SIGSTOP);
    steps();
    _exit(7);  // the loop's own end: the watchdog let it be
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(7), "");
}

TEST_F(TrainerDeath, ASecondSignalExitsAtOnce) {
  auto run = [] {
    StopSignalScope signals;
    std::raise(SIGINT);
    std::raise(SIGINT);
    BlockForever();
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(128 + SIGINT), "second SIGINT, exiting at once");
}

// The heartbeat goes on while training is stuck (beat), and counts progress only when it is made.
TEST(Heartbeat, BeatsEverySecondAndCountsProgressMarks) {
  const std::string dir = ScratchDir("heartbeat");
  ASSERT_EQ(setenv("CROSSBOW_HEARTBEAT_DIR", dir.c_str(), 1), 0);
  const std::string path = HeartbeatPath(2);
  unsetenv("CROSSBOW_HEARTBEAT_DIR");
  EXPECT_EQ(path, (fs::path(dir) / "rank2.json").string());
  EXPECT_EQ(HeartbeatPath(2), "");
  auto read = [&path] {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::smatch m;
    const std::regex beat(
        R"(\{"rank": 2, "pid": (\d+), "beat": (\d+), "progress": (\d+), "iteration": 9, )"
        R"("checkpoint": 8\}\n)");
    EXPECT_TRUE(std::regex_match(text, m, beat)) << text;
    return std::make_pair(std::stoll(m[2]), std::stoll(m[3]));
  };
  Watchdog watchdog(
      0, 5, [] { return std::string(); }, path, 2);
  for (int i = 0; i < 3; ++i) watchdog.Progress();
  watchdog.Trained(9);
  watchdog.Checkpointed(8);  // written at once, before the thread's first beat
  const auto [first_beat, first_progress] = read();
  EXPECT_EQ(first_progress, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));  // stuck: no progress
  const auto [beat, progress] = read();
  EXPECT_GE(beat, first_beat + 2);
  EXPECT_EQ(progress, 3);
}

}  // namespace
}  // namespace crossbow
