#include "crossbow/train/checkpoint.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "crossbow/core/serialize.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

namespace fs = std::filesystem;

Tensor Filled(Shape shape, float value) {
  Tensor t(shape, DataType::kFloat32);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = value + static_cast<float>(i);
  return t;
}

CheckpointInfo Info(int64_t iteration) {
  CheckpointInfo info;
  info.net = "small";
  info.net_source = "/nets/small.py:small";
  info.sync = "sma";
  info.learners_per_device = 3;
  info.iteration = iteration;
  info.images = iteration * 48;
  info.elapsed_s = 1.5;
  info.best_top1 = 0.25;
  return info;
}

std::string Message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Checkpoint, RoundTripsTensorsCountersAndDataPosition) {
  const std::string path = CheckpointPath(ScratchDir("ckpt_roundtrip"));
  Tensor z = Filled({2, 3}, 1), m = Filled({4}, -2);
  const std::string state("epoch 3\0pos 17", 14);  // binary-safe
  WriteCheckpoint(path, Info(7), state, {{"z/w", &z}, {"learner0/w_momentum", &m}});
  Checkpoint c = ReadCheckpoint(path);
  EXPECT_EQ(c.info.net, "small");
  EXPECT_EQ(c.info.net_source, "/nets/small.py:small");
  EXPECT_EQ(c.info.sync, "sma");
  EXPECT_EQ(c.info.learners_per_device, 3);
  EXPECT_EQ(c.info.iteration, 7);
  EXPECT_EQ(c.info.images, 7 * 48);
  EXPECT_DOUBLE_EQ(c.info.elapsed_s, 1.5);
  EXPECT_DOUBLE_EQ(c.info.best_top1, 0.25);
  EXPECT_DOUBLE_EQ(c.info.time_to_accuracy_s, -1);
  EXPECT_EQ(c.train_state, state);
  ASSERT_EQ(c.tensors.size(), 2u);
  EXPECT_EQ(c.tensors.at("z/w").shape(), (Shape{2, 3}));
  EXPECT_EQ(c.tensors.at("z/w").data<float>()[5], 6.f);
  EXPECT_EQ(c.tensors.at("learner0/w_momentum").data<float>()[0], -2.f);
}

TEST(Checkpoint, TruncatedMissingAndForeignFilesAreClearErrors) {
  const std::string dir = ScratchDir("ckpt_bad");
  const std::string path = CheckpointPath(dir);
  Tensor z = Filled({64}, 0);
  WriteCheckpoint(path, Info(1), "", {{"z/w", &z}});
  fs::resize_file(path, fs::file_size(path) / 2);
  EXPECT_NE(Message([&] { ReadCheckpoint(path); }).find("truncated"), std::string::npos);

  EXPECT_NE(Message([&] { ReadCheckpoint(dir + "/none.cbt"); }).find("cannot open"),
            std::string::npos);

  const std::string text = dir + "/foreign.cbt";
  std::ofstream(text) << "{\"not\": \"a checkpoint\"}";
  EXPECT_NE(Message([&] { ReadCheckpoint(text); }).find("not a Crossbow tensor file"),
            std::string::npos);

  const std::string weights = dir + "/weights.cbt";  // what Learner::Save writes
  SaveTensors(weights, {{"w", &z}});
  EXPECT_NE(Message([&] { ReadCheckpoint(weights); }).find("not a training checkpoint"),
            std::string::npos);
}

TEST(Checkpoint, RefusesAnotherNetOrShape) {
  const std::string path = CheckpointPath(ScratchDir("ckpt_compat"));
  Tensor z = Filled({4}, 0), bigger = Filled({5}, 0);
  WriteCheckpoint(path, Info(1), "", {{"z/w", &z}});
  Checkpoint c = ReadCheckpoint(path);
  EXPECT_NO_THROW(CheckCompatible(c, path, "small", {{"z/w", &z}, {"learner0/w", &bigger}}));
  EXPECT_NE(Message([&] {
              CheckCompatible(c, path, "resnet20", {{"z/w", &z}});
            }).find("is of net 'small', not 'resnet20'"),
            std::string::npos);
  EXPECT_NE(Message([&] {
              CheckCompatible(c, path, "small", {{"z/w", &bigger}});
            }).find("'z/w' has shape [4], the net needs [5]"),
            std::string::npos);
  EXPECT_NE(Message([&] {
              CheckCompatible(c, path, "small", {{"z/b", &z}});
            }).find("no 'z/b'"),
            std::string::npos);
}

// A writer killed with SIGKILL at an arbitrary moment leaves the previous checkpoint loadable.
TEST(Checkpoint, KillDuringWriteLeavesThePreviousCheckpoint) {
  const std::string dir = ScratchDir("ckpt_kill");
  const std::string path = CheckpointPath(dir);
  Tensor first = Filled({16}, 0);
  WriteCheckpoint(path, Info(0), "", {{"z/w", &first}});
  bool killed_mid_write = false;  // a temporary file left behind proves it
  for (int round = 0; round < 20 && !killed_mid_write; ++round) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // A failed write ends the child at once, saying why, rather than letting this copy of
      // the test runner go on.
      try {
        Tensor big = Filled({8 << 20}, 1);  // 32 MB per write
        for (int64_t i = 1;; ++i) WriteCheckpoint(path, Info(i), "", {{"z/w", &big}});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "the writing child failed: %s\n", e.what());
      }
      ::_exit(3);
    }
    // Kill once the child is writing (a temporary file exists), however long a loaded machine
    // takes it to get there, and a few milliseconds into a write.
    auto writing = [&] {
      for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().filename() != "checkpoint.cbt") return true;
      }
      return false;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!writing() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 7));
    ASSERT_EQ(::kill(child, SIGKILL), 0);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "the writing child exited with " << WEXITSTATUS(status) << " before it was killed";
    Checkpoint c = ReadCheckpoint(path);  // the previous complete checkpoint
    EXPECT_EQ(c.info.net, "small");
    const int64_t n = c.tensors.at("z/w").numel();
    EXPECT_TRUE(n == 16 || n == (8 << 20)) << n;
    for (const auto& entry : fs::directory_iterator(dir)) {
      killed_mid_write |= entry.path().filename() != "checkpoint.cbt";
    }
  }
  EXPECT_TRUE(killed_mid_write);
  RemoveStaleTemporaries(dir);
  for (const auto& entry : fs::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "checkpoint.cbt");
  }
}

}  // namespace
}  // namespace crossbow
