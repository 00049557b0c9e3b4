#include "crossbow/train/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>

#include "crossbow/core/serialize.h"
#include "crossbow/train/checkpoint.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

using crossbow::testing::ErrorOf;

namespace fs = std::filesystem;
constexpr int kClasses = 4;
const Shape kExample = {2, 2, 2};

// A linear classifier: FC -> softmax loss.
LearnerSpec LinearSpec(const std::string& name = "linear") {
  LearnerSpec spec;
  spec.name = name;
  spec.input_shape = kExample;
  spec.init_net.ops = {MakeFiller("XavierFill", "w", {kClasses, 8}),
                       MakeFiller("ConstantFill", "b", {kClasses})};
  spec.net.name = name;
  spec.net.ops = {MakeOperator("FC", {"data", "w", "b"}, {"logits"}),
                  MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"})};
  spec.params = {"w", "b"};
  spec.solver.lr = 0.05;
  spec.seed = 5;
  return spec;
}

// Examples in memory, served in a fixed order; `poison` makes one batch (counted over the
// whole run) all NaN, and `on_batch` runs before a batch is handed out.
class MemorySource : public BatchSource {
 public:
  MemorySource(int64_t n, int64_t batch, uint32_t seed) : batch_(batch) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> noise(0.f, 0.7f);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t label = static_cast<int32_t>(i % kClasses);
      labels_.push_back(label);
      for (int j = 0; j < 8; ++j)
        images_.push_back(noise(rng) + (j % kClasses == label ? 2.f : 0.f));
    }
  }
  Shape ExampleShape() const override { return kExample; }
  int64_t EpochSize() const override { return static_cast<int64_t>(labels_.size()); }
  int64_t batch_size() const override { return batch_; }

  const Batch* Acquire() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (on_batch) on_batch(served_);
    auto owned = std::make_unique<Owned>();
    const int64_t size = std::min(batch_, EpochSize() - position_);
    owned->images.assign(images_.begin() + position_ * 8, images_.begin() + (position_ + size) * 8);
    owned->labels.assign(labels_.begin() + position_, labels_.begin() + position_ + size);
    if (served_ == poison) owned->images.assign(owned->images.size(), NAN);
    owned->batch = {owned->images.data(), owned->labels.data(),           size, epoch_,
                    position_ / batch_,   position_ + size == EpochSize()};
    position_ += size;
    ++served_;
    if (position_ == EpochSize()) {
      position_ = 0;
      ++epoch_;
    }
    const Batch* b = &owned->batch;
    out_[b] = std::move(owned);
    return b;
  }
  // Released batches stay allocated: the engine reads a batch's size after releasing it.
  void Release(const Batch* batch) override {
    std::lock_guard<std::mutex> lock(mutex_);
    released_.push_back(std::move(out_.at(batch)));
    out_.erase(batch);
  }
  std::string SaveState() const override {
    return std::to_string(epoch_) + " " + std::to_string(position_) + " " + std::to_string(served_);
  }
  void RestoreState(const std::string& state) override {
    std::istringstream in(state);
    in >> epoch_ >> position_ >> served_;
  }

  int64_t poison = -1;
  std::function<void(int64_t)> on_batch;

 private:
  struct Owned {
    std::vector<float> images;
    std::vector<int32_t> labels;
    Batch batch;
  };
  int64_t batch_;
  std::vector<float> images_;
  std::vector<int32_t> labels_;
  std::mutex mutex_;
  int64_t epoch_ = 0, position_ = 0, served_ = 0;
  std::map<const Batch*, std::unique_ptr<Owned>> out_;
  std::vector<std::unique_ptr<Owned>> released_;
};

EngineOptions Learners(int k, const std::string& sync = "sma") {
  EngineOptions o;
  o.devices = ParseDevices("cpu:0");
  o.learners_per_device = k;
  o.sync = sync;
  return o;
}

std::vector<nlohmann::json> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(Trainer, TrainsEvaluatesAndWritesMetrics) {
  MemorySource train(256, 8, 1), test(64, 16, 2);
  const std::string metrics = ScratchDir("trainer_metrics") + "/m.jsonl";
  TrainerOptions o;
  o.epochs = 3;
  o.lr.base_lr = 0.05;
  o.lr.policy = "multistep";
  o.lr.steps = {2};
  o.metrics_path = metrics;
  o.log_every = 4;
  o.progress = false;
  Trainer trainer(LinearSpec(), Learners(2), &train, &test, o);
  TrainResult r = trainer.Fit();
  EXPECT_EQ(r.stop_reason, "epochs");
  EXPECT_DOUBLE_EQ(r.epochs, 3.0);
  EXPECT_EQ(r.iterations, 3 * 256 / 16);
  EXPECT_EQ(r.learners_per_device, 2);
  ASSERT_TRUE(r.test.has_value());
  EXPECT_GT(r.test->top1, 0.8);
  EXPECT_GT(r.images_per_s, 0);
  std::vector<nlohmann::json> lines = ReadLines(metrics);
  int evaluations = 0;
  for (const auto& line : lines) {
    EXPECT_EQ(line["distance_to_z"].size(), 2u);
    EXPECT_DOUBLE_EQ(line["lr"].get<double>(), line["epoch"].get<double>() <= 2 ? 0.05 : 0.005);
    evaluations += line.contains("accuracy");
  }
  EXPECT_EQ(evaluations, 3);  // one per epoch
  EXPECT_EQ(lines.back()["iteration"], r.iterations);
}

TEST(Trainer, AStopBetweenEvaluationsEvaluatesTheFinalModel) {
  MemorySource train(256, 8, 1), test(64, 16, 2);
  const std::string metrics = ScratchDir("trainer_final_eval") + "/m.jsonl";
  TrainerOptions o;
  o.iterations = 5;  // an epoch is 8 iterations of 2 learners x 16
  o.lr.base_lr = 0.05;
  o.metrics_path = metrics;
  o.log_every = 100;
  o.progress = false;
  Trainer trainer(LinearSpec(), Learners(2), &train, &test, o);
  TrainResult r = trainer.Fit();
  EXPECT_EQ(r.stop_reason, "iterations");
  ASSERT_TRUE(r.test.has_value());
  std::vector<nlohmann::json> lines = ReadLines(metrics);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["iteration"], 5);
  EXPECT_DOUBLE_EQ(lines[0]["accuracy"].get<double>(), r.test->top1);
}

TEST(Trainer, StopsAtTargetAccuracyAndReportsTheTime) {
  MemorySource train(256, 8, 1), test(64, 16, 2);
  TrainerOptions o;
  o.epochs = 50;
  o.eval_every = 2;
  o.target_accuracy = 0.75;
  o.progress = false;
  TrainResult r = Trainer(LinearSpec(), Learners(1), &train, &test, o).Fit();
  EXPECT_EQ(r.stop_reason, "target_accuracy");
  EXPECT_LT(r.epochs, 50);
  EXPECT_GE(r.test->top1, 0.75);
  EXPECT_GT(r.time_to_accuracy_s, 0);
  EXPECT_LE(r.time_to_accuracy_s, r.elapsed_s);
}

TEST(Trainer, AutotunerPicksLearnersAndItsIterationsCount) {
  MemorySource train(512, 8, 1);
  TrainerOptions o;
  o.epochs = 20;  // the trials (23 iterations per setting) take about 8 epochs here
  o.autotune = true;
  o.autotune_seconds = 0;  // windows of 20 iterations, not of a time
  o.progress = false;
  TrainResult r = Trainer(LinearSpec(), Learners(1), &train, nullptr, o).Fit();
  ASSERT_FALSE(r.autotune.empty());
  EXPECT_EQ(r.autotune.front().action, "start");
  EXPECT_EQ(r.autotune.front().learners_per_device, 1);
  for (const auto& d : r.autotune) EXPECT_GT(d.images_per_second, 0) << d.action;
  EXPECT_GE(r.learners_per_device, 1);
  // Every image the trial iterations trained on is part of the 20 epochs, not extra: the run
  // ends within one iteration (one batch per learner) of the 20th epoch. On a loaded machine
  // the search can still be running then, its last iteration with more learners than the
  // count it settles on: the bound is the most learners any iteration ran with.
  int64_t most = r.learners_per_device;
  for (const auto& d : r.autotune) most = std::max<int64_t>(most, d.learners_per_device);
  EXPECT_GE(r.epochs, 20.0);
  EXPECT_LT(r.epochs, 20.0 + most * 8.0 / 512);
}

TEST(Trainer, TheAutotunersOptionsComeFromTheTrainersOwn) {
  TrainerOptions o;
  o.autotune_threshold = 0.25;
  o.autotune_seconds = 0.5;
  o.autotune_confirm = false;
  const AutotunerOptions a = AutotunerOptionsOf(o);
  EXPECT_EQ(a.threshold, 0.25);
  EXPECT_EQ(a.window_seconds, 0.5);
  EXPECT_FALSE(a.confirm_adds);
  EXPECT_TRUE(AutotunerOptionsOf(TrainerOptions{}).confirm_adds);
}

// Resuming from a checkpoint gives the loss curve of the run that was not interrupted.
TEST(Trainer, ResumeContinuesTheSameLossCurve) {
  auto run = [](const std::string& dir, int64_t epochs, bool resume) {
    MemorySource train(128, 8, 1);
    TrainerOptions o;
    o.epochs = epochs;
    o.lr.policy = "step";
    o.lr.step_size = 1;
    o.lr.gamma = 0.5;
    o.checkpoint_dir = dir;
    o.resume = resume;
    o.metrics_path = dir + "/metrics.jsonl";
    o.log_every = 1;
    o.progress = false;
    return Trainer(LinearSpec(), Learners(3), &train, nullptr, o).Fit();
  };
  const std::string whole = ScratchDir("trainer_whole"), parts = ScratchDir("trainer_parts");
  run(whole, 3, false);
  run(parts, 1, false);
  EXPECT_EQ(ReadCheckpoint(CheckpointPath(parts)).info.options.at("epochs"), "1");
  TrainResult resumed = run(parts, 3, true);
  EXPECT_TRUE(resumed.resumed);
  // The checkpoint keeps the options of the run that wrote it (a resume warns of changes).
  const CheckpointInfo info = ReadCheckpoint(CheckpointPath(parts)).info;
  EXPECT_EQ(info.options.at("epochs"), "3");
  EXPECT_EQ(info.options.at("lr_policy"), "\"step\"");
  EXPECT_EQ(info.options.count("metrics"), 0u);  // per rank, not the run's
  std::vector<nlohmann::json> a = ReadLines(whole + "/metrics.jsonl");
  std::vector<nlohmann::json> b = ReadLines(parts + "/metrics.jsonl");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["iteration"], b[i]["iteration"]);
    EXPECT_NEAR(a[i]["loss"].get<double>(), b[i]["loss"].get<double>(), 1e-6) << "line " << i;
    EXPECT_EQ(a[i]["lr"], b[i]["lr"]);
  }
}

TEST(Trainer, NanLossStopsWithIterationAndLearner) {
  MemorySource train(128, 8, 1);
  train.poison = 5;  // the 6th batch: iteration 3, learner 1
  TrainerOptions o;
  o.epochs = 2;
  o.progress = false;
  const std::string dir = ScratchDir("trainer_nan");
  o.checkpoint_dir = dir;
  o.checkpoint_every_epochs = 0;
  Trainer trainer(LinearSpec(), Learners(2), &train, nullptr, o);
  const std::string message = ErrorOf([&] { trainer.Fit(); });
  EXPECT_NE(message.find("training stopped at iteration 3"), std::string::npos) << message;
  EXPECT_NE(message.find("learner 1"), std::string::npos) << message;
  EXPECT_NE(message.find("loss is nan"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(CheckpointPath(dir)));  // a diverged state is never saved
}

TEST(Trainer, SkipNanSkipsTheBatchAndGoesOn) {
  MemorySource train(128, 8, 1);
  train.poison = 5;
  TrainerOptions o;
  o.epochs = 2;
  o.progress = false;
  EngineOptions e = Learners(2);
  e.skip_nan = true;
  TrainResult r = Trainer(LinearSpec(), e, &train, nullptr, o).Fit();
  EXPECT_EQ(r.stop_reason, "epochs");
  EXPECT_EQ(r.skipped_batches, 1);
}

TEST(Trainer, SigintWritesACheckpointAndStops) {
  MemorySource train(128, 8, 1);
  train.on_batch = [](int64_t served) {
    if (served == 20) std::raise(SIGINT);
  };
  TrainerOptions o;
  o.epochs = 100;
  o.progress = false;
  o.checkpoint_dir = ScratchDir("trainer_sigint");
  o.checkpoint_every_epochs = 0;
  TrainResult r = Trainer(LinearSpec(), Learners(2), &train, nullptr, o).Fit();
  EXPECT_EQ(r.stop_reason, "signal (SIGINT)");
  EXPECT_LT(r.epochs, 2);
  Checkpoint c = ReadCheckpoint(CheckpointPath(o.checkpoint_dir));
  EXPECT_EQ(c.info.iteration, r.iterations);
  EXPECT_EQ(c.info.learners_per_device, 2);
}

TEST(Trainer, BadOptionsFailBeforeAnyWork) {
  MemorySource train(64, 8, 1), empty(0, 8, 1), zero_batch(64, 0, 1);
  TrainerOptions ok;
  ok.epochs = 1;
  auto error = [&](BatchSource* source, TrainerOptions o, LearnerSpec spec = LinearSpec()) {
    return ErrorOf([&] { Trainer(spec, Learners(1), source, nullptr, o); });
  };
  EXPECT_NE(error(&zero_batch, ok).find("batch size must be > 0, got 0"), std::string::npos);
  EXPECT_NE(error(&empty, ok).find("source is empty"), std::string::npos);
  EXPECT_NE(error(&train, TrainerOptions{}).find("would never stop"), std::string::npos);
  LearnerSpec wide = LinearSpec();
  wide.input_shape = {3, 32, 32};
  EXPECT_NE(error(&train, ok, wide).find("examples of shape [2, 2, 2], the net takes [3, 32, 32]"),
            std::string::npos);
  TrainerOptions resume = ok;
  resume.resume = true;
  EXPECT_NE(error(&train, resume).find("resume (--resume) needs a checkpoint_dir"),
            std::string::npos);
  TrainerOptions target = ok;
  target.target_accuracy = 0.5;
  EXPECT_NE(error(&train, target).find("needs a test source"), std::string::npos);
  TrainerOptions policy = ok;
  policy.lr.policy = "stepp";
  EXPECT_NE(error(&train, policy)
                .find("lr_policy (--lr-policy) must be fixed, step, multistep, "
                      "exp, inv, poly, cosine, flatcos or onecycle, got 'stepp'; did you mean "
                      "'step'?"),
            std::string::npos);
}

TEST(Trainer, ResumeRefusesForeignAndTruncatedCheckpoints) {
  MemorySource train(64, 8, 1);
  TrainerOptions o;
  o.epochs = 1;
  o.progress = false;
  o.checkpoint_dir = ScratchDir("trainer_foreign");
  Trainer(LinearSpec("other"), Learners(1), &train, nullptr, o).Fit();
  o.resume = true;
  auto resume = [&] { Trainer(LinearSpec("linear"), Learners(1), &train, nullptr, o).Fit(); };
  EXPECT_NE(ErrorOf(resume).find("is of net 'other', not 'linear'"), std::string::npos);
  const std::string path = CheckpointPath(o.checkpoint_dir);
  fs::resize_file(path, fs::file_size(path) - 10);
  EXPECT_NE(ErrorOf(resume).find("truncated"), std::string::npos);
}

}  // namespace
}  // namespace crossbow
