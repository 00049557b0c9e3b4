#include "crossbow/engine/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <list>
#include <mutex>
#include <numeric>

#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/model_layout.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "tests/cpp/engine_test_util.h"
#include "tests/cpp/expect_error.h"
#include "tests/cpp/lifted_inputs.h"

namespace crossbow {
namespace {

TEST(ParseDevices, GroupsAndErrors) {
  auto devices = ParseDevices("cpu:0-1,cpu:2-3");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].cores, (std::vector<int>{2, 3}));
  EXPECT_EQ(ParseDevices("cpu:5")[0].cores, std::vector<int>{5});
  EXPECT_FALSE(ParseDevices("cpu")[0].cores.empty());
  EXPECT_EQ(ParseDevices("cuda:0,cuda:0")[1].device, (Device{DeviceType::kCUDA, 0}));
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(ParseDevices("cuda:local")[0].device, (Device{DeviceType::kCUDA, 3}));
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  for (const char* bad : {"gpu:0", "cpu:3-1", "cpu:a", "cpu:0-1,cpu:1-2", "cpu,cpu:0", ""}) {
    EXPECT_ERROR(ParseDevices(bad), ValueError, bad);
  }
}

TEST(Engine, GpuDevicesFailBeforeAnyWorkWhereNoGpuIsUsable) {
  auto source = Source(8, 4);
  auto expect_error = [&](const std::string& devices, const std::string& message) {
    try {
      Engine engine(Spec(false), Options(devices, 1), source.get());
      FAIL() << devices << " was accepted";
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expect_error("cpu:0,cuda:0", "CPU and GPU devices cannot be mixed");
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a GPU is usable here: nothing fails";
  expect_error("cuda:0", HasDeviceBackend(DeviceType::kCUDA)
                             ? "device cuda:0 was asked for but no GPU is usable here"
                             : "device cuda:0 was asked for but this Crossbow was built without");
}

TEST(Engine, SgdEqualsAPlainLearner) {
  auto source = Source(24, 6);
  Engine engine(Spec(true), Options("cpu:0", 1, "sgd"), source.get());
  Learner plain(Spec(true));
  auto twin = Source(24, 6);
  for (int i = 0; i < 6; ++i) {
    const Batch* b = twin->Acquire();
    float loss = plain.Step(b->images, {b->size, 3, 8, 8}, b->labels);
    twin->Release(b);
    EXPECT_FLOAT_EQ(engine.Iterate().loss, loss) << "iteration " << i;
  }
  auto state = Snapshot(engine);
  for (const char* name : {"w", "fw", "fb", "s", "b"}) {
    ExpectNear(state["z/" + std::string(name)], *plain.Blob(name), 0.f, name);
  }
  ExpectNear(state["z/rm"], *plain.Blob("rm"), 0.f, "rm");
  EXPECT_ERROR(engine.SetLearnersPerDevice(2), ValueError, "sync 'sgd' trains one learner");
}

// Forwards a source's batches as mixed ones (as the loader's Mixup and CutMix hand them out):
// each example's second label is its neighbour's, weighed by lam = 0.2, 0.4, ...
class MixedLabels final : public BatchSource {
 public:
  explicit MixedLabels(std::unique_ptr<BatchSource> source) : source_(std::move(source)) {}
  Shape ExampleShape() const override { return source_->ExampleShape(); }
  int64_t EpochSize() const override { return source_->EpochSize(); }
  int64_t batch_size() const override { return source_->batch_size(); }
  const Batch* Acquire() override {
    const Batch* batch = source_->Acquire();
    std::lock_guard<std::mutex> lock(mutex_);
    Mixed& m = out_.emplace_back();
    m.from = batch;
    m.batch = *batch;
    for (int64_t i = 0; i < batch->size; ++i) {
      m.labels_b.push_back(batch->labels[(i + 1) % batch->size]);
      m.lam.push_back(0.2f * static_cast<float>(i % 5 + 1));
    }
    m.batch.labels_b = m.labels_b.data();
    m.batch.lam = m.lam.data();
    return &m.batch;
  }
  void Release(const Batch* batch) override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it =
        std::find_if(out_.begin(), out_.end(), [&](const Mixed& m) { return &m.batch == batch; });
    source_->Release(it->from);
    out_.erase(it);
  }
  std::string SaveState() const override { return source_->SaveState(); }
  void RestoreState(const std::string& state) override { source_->RestoreState(state); }

 private:
  struct Mixed {
    const Batch* from;
    Batch batch;
    std::vector<int32_t> labels_b;
    std::vector<float> lam;
  };
  std::unique_ptr<BatchSource> source_;
  std::mutex mutex_;
  std::list<Mixed> out_;
};

// The engine hands a mixed batch's second labels and weights to its learner: each iteration's
// loss and the model are a plain learner's on the mixed loss.
TEST(Engine, AMixedBatchTrainsOnTheMixedLoss) {
  MixedLabels source(Source(24, 6)), twin(Source(24, 6));
  Engine engine(Spec(false), Options("cpu:0", 1, "sgd"), &source);
  Learner plain(Spec(false));
  for (int i = 0; i < 6; ++i) {
    const Batch* b = twin.Acquire();
    const float loss =
        plain.ForwardBackward(b->images, {b->size, 3, 8, 8}, b->labels, b->labels_b, b->lam);
    plain.Update();
    twin.Release(b);
    EXPECT_FLOAT_EQ(engine.Iterate().loss, loss) << "iteration " << i;
  }
  auto state = Snapshot(engine);
  for (const char* name : {"w", "fw", "fb"}) {
    ExpectNear(state["z/" + std::string(name)], *plain.Blob(name), 0.f, name);
  }
}

TEST(Engine, SsgdOfKLearnersEqualsOneLearnerOfKTimesTheBatch) {
  auto source = Source(48, 4);
  Engine engine(Spec(false), Options("cpu:0-1", 3, "ssgd"), source.get());
  auto big = Source(48, 12);
  Engine single(Spec(false), Options("cpu:0", 1, "sgd"), big.get());
  for (int i = 0; i < 5; ++i) {
    IterationResult r = engine.Iterate();
    EXPECT_EQ(r.images, 12);
    EXPECT_NEAR(r.loss, single.Iterate().loss, 1e-5) << "iteration " << i;
  }
  auto a = Snapshot(engine), b = Snapshot(single);
  for (const char* name : {"w", "fw", "fb"}) {
    ExpectNear(a["z/" + std::string(name)], b["z/" + std::string(name)], 1e-5f, name);
  }
  for (double d : engine.DistancesToAverage()) EXPECT_EQ(d, 0.0);
}

TEST(Engine, TwoDevicesEqualOneDeviceWithTheSameLearners) {
  auto s1 = Source(64, 4), s2 = Source(64, 4);
  Engine two(Spec(true), Options("cpu:0,cpu:1", 2), s1.get());
  Engine one(Spec(true), Options("cpu:0-1", 4), s2.get());
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(two.Iterate().loss, one.Iterate().loss, 1e-4);
  auto a = Snapshot(two), b = Snapshot(one);
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) ExpectNear(t, b.at(name), 1e-4f, name);
}

TEST(Engine, SmaLearnersDivergeAndALearningRateDropRestartsThemFromZ) {
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cpu:0-1", 3), source.get());
  for (int i = 0; i < 5; ++i) engine.Iterate();
  for (double d : engine.DistancesToAverage()) EXPECT_GT(d, 0.0);
  engine.SetLearningRate(0.04);  // not a drop yet
  EXPECT_GT(engine.DistancesToAverage()[0], 0.0);
  engine.SetLearningRate(0.005);
  for (double d : engine.DistancesToAverage()) EXPECT_EQ(d, 0.0);
  auto state = Snapshot(engine);
  for (float v : std::vector<float>(state["learner2/w_momentum"].data<float>(),
                                    state["learner2/w_momentum"].data<float>() + 8 * 27)) {
    ASSERT_EQ(v, 0.f);
  }
  ExpectNear(state["learner1/rm"], state["z/rm"], 0.f, "rm");
  engine.Iterate();
  EXPECT_GT(engine.DistancesToAverage()[1], 0.0);
}

TEST(Engine, RestartDropZeroNeverRestarts) {
  auto source = Source(64, 4);
  EngineOptions options = Options("cpu:0-1", 3);
  options.restart_drop = 0;
  Engine engine(Spec(true), options, source.get());
  for (int i = 0; i < 5; ++i) engine.Iterate();
  engine.SetLearningRate(0.005);  // a drop at the default 0.5
  for (double d : engine.DistancesToAverage()) EXPECT_GT(d, 0.0);
  EXPECT_FALSE(IsRestartingDrop(0, 0.1, 0));
  EXPECT_TRUE(IsRestartingDrop(0.05, 0.1, 0.5));
  EXPECT_FALSE(IsRestartingDrop(0.051, 0.1, 0.5));
}

TEST(Engine, LargerAlphaKeepsLearnersCloserToZ) {
  auto mean_distance = [](double alpha) {
    auto source = Source(64, 4);
    EngineOptions o = Options("cpu:0-1", 4);
    o.alpha = alpha;
    Engine engine(Spec(true), o, source.get());
    for (int i = 0; i < 10; ++i) engine.Iterate();
    auto d = engine.DistancesToAverage();
    return std::accumulate(d.begin(), d.end(), 0.0) / d.size();
  };
  const double loose = mean_distance(0.02), tight = mean_distance(0.5);
  EXPECT_LT(tight, 0.7 * loose) << "alpha 0.5: " << tight << ", alpha 0.02: " << loose;
}

TEST(Engine, EvaluatesTheAverageModel) {
  auto source = Source(32, 4);
  Engine engine(Spec(true), Options("cpu:0-1", 2), source.get());
  for (int i = 0; i < 4; ++i) engine.Iterate();
  auto state = Snapshot(engine);
  Learner reference(Spec(true));
  for (const char* name : {"w", "fw", "fb", "s", "b", "rm", "rv"}) {
    CopyTensor(state["z/" + std::string(name)], reference.Blob(name), name);
  }
  auto test = Source(10, 4, 9), twin = Source(10, 4, 9);
  EvalResult r = engine.Evaluate(test.get()), expected;
  for (int i = 0; i < 3; ++i) {
    const Batch* b = twin->Acquire();
    EvalResult e = reference.Evaluate(b->images, {b->size, 3, 8, 8}, b->labels);
    expected.loss += e.loss * b->size / 10;
    expected.top1 += e.top1 * b->size / 10;
    twin->Release(b);
  }
  EXPECT_NEAR(r.loss, expected.loss, 1e-5);
  EXPECT_NEAR(r.top1, expected.top1, 1e-9);
}

TEST(Engine, StateRestoresIntoAnotherEngineAndAnotherLearnerCount) {
  auto s1 = Source(64, 4);
  Engine a(Spec(true), Options("cpu:0-1", 2), s1.get());
  for (int i = 0; i < 3; ++i) a.Iterate();
  auto saved = Snapshot(a);
  auto s2 = Source(64, 4);
  s2->RestoreState(s1->SaveState());
  Engine b(Spec(true), Options("cpu:0-1", 2), s2.get());
  b.RestoreState(saved, a.iteration());
  EXPECT_EQ(b.iteration(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(a.Iterate().loss, b.Iterate().loss);
  auto s3 = Source(64, 4);
  Engine c(Spec(true), Options("cpu:0-1", 3), s3.get());
  c.RestoreState(saved, 3);
  auto d = c.DistancesToAverage();
  EXPECT_GT(d[1], 0.0);
  EXPECT_EQ(d[2], 0.0);  // not in the checkpoint: starts from z

  auto broken = saved;
  broken.erase("z/fw");
  EXPECT_ERROR(
      {
        try {
          c.RestoreState(broken, 3);
        } catch (const ValueError& e) {
          EXPECT_NE(std::string(e.what()).find("'z/fw'"), std::string::npos) << e.what();
          throw;
        }
      },
      ValueError, "the checkpoint has no 'z/fw'");
  broken = saved;
  broken["learner0/w"] = Tensor({2, 2}, DataType::kFloat32);
  EXPECT_ERROR(c.RestoreState(broken, 3), ValueError,
               "checkpoint blob 'learner0/w' has shape [2, 2]");
}

TEST(Engine, AddingLearnersStartsThemFromZ) {
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cpu:0,cpu:1", 1), source.get());
  engine.Iterate();
  engine.SetLearnersPerDevice(3);
  EXPECT_EQ(engine.num_learners(), 6);
  auto d = engine.DistancesToAverage();
  EXPECT_EQ(d[4], 0.0);
  EXPECT_EQ(engine.Iterate().learner_losses.size(), 6u);
  engine.SetLearnersPerDevice(2);
  EXPECT_EQ(engine.Iterate().images, 16);
}

TEST(Engine, LearnersAddedInSsgdStartFromTheTrainedModel) {
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cpu:0", 1, "ssgd"), source.get());
  engine.Iterate();
  engine.Iterate();
  engine.SetLearnersPerDevice(2);
  for (double d : engine.DistancesToAverage()) EXPECT_EQ(d, 0.0);
}

// A source whose second batch poisons the images (inf): the loss of that learner is NaN.
// Four batches of four; the second is `poison` everywhere.
std::unique_ptr<ArraySource> PoisonedSource(float poison = 3e38f) {
  auto clean = Source(16, 4);
  std::vector<float> images(16 * 192);
  std::vector<int32_t> labels(16);
  for (int i = 0; i < 4; ++i) {
    const Batch* b = clean->Acquire();
    std::copy_n(b->images, 4 * 192, images.begin() + i * 4 * 192);
    std::copy_n(b->labels, 4, labels.begin() + i * 4);
    clean->Release(b);
  }
  std::fill_n(images.begin() + 4 * 192, 4 * 192, poison);
  return std::make_unique<ArraySource>(std::move(images), std::move(labels), Shape{3, 8, 8}, 4);
}

TEST(Engine, AFailingLearnerStopsIterateWithItsMessage) {
  auto source = PoisonedSource();
  Engine engine(Spec(false), Options("cpu:0,cpu:1", 2), source.get());
  try {
    engine.Iterate();
    FAIL() << "a NaN loss went unnoticed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("learner 1 (device 0)"), std::string::npos) << what;
    EXPECT_NE(what.find("at iteration 0"), std::string::npos) << what;
  }
  EXPECT_ERROR(engine.Iterate(), Error, "learner 1 (device 0): loss is -nan at iteration 0");
  EXPECT_ERROR(engine.Evaluate(source.get()), Error,
               "learner 1 (device 0): loss is -nan at iteration 0");
}  // the destructor joins every thread: a hang here fails the test by timeout

TEST(Engine, SkipNanSkipsTheUpdateAndGoesOn) {
  auto source = PoisonedSource();
  EngineOptions o = Options("cpu:0,cpu:1", 1);  // two batches an iteration, the 2nd poisoned
  o.skip_nan = true;
  Engine engine(Spec(false), o, source.get());
  IterationResult r = engine.Iterate();
  EXPECT_EQ(r.skipped, 1);
  EXPECT_TRUE(std::isfinite(r.loss));
  EXPECT_EQ(engine.Iterate().skipped, 0);
  for (double d : engine.DistancesToAverage()) EXPECT_TRUE(std::isfinite(d));
}

// With batch norm, a batch of NaN pixels gives a finite loss (ReLU makes the NaNs zeros) but NaN
// gradients and running statistics.
TEST(Engine, NonFiniteGradientsBehindAFiniteLossAreCaught) {
  auto source = PoisonedSource(std::nanf(""));
  Engine engine(Spec(true), Options("cpu:0,cpu:1", 1), source.get());
  try {
    engine.Iterate();
    FAIL() << "NaN gradients went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gradients or batch-norm statistics are not finite"),
              std::string::npos)
        << e.what();
  }
}

TEST(Engine, SkippedLearnersDoNotPoisonTheModelOrItsStatistics) {
  for (std::string sync : {"sma", "ssgd"}) {
    SCOPED_TRACE(sync == "sma" ? "sma" : "ssgd");
    auto source = PoisonedSource(std::nanf(""));
    EngineOptions o = Options("cpu:0,cpu:1", 1, sync);
    o.skip_nan = true;
    Engine engine(Spec(true), o, source.get());
    EXPECT_EQ(engine.Iterate().skipped, 1);
    EXPECT_TRUE(std::isfinite(engine.Iterate().loss));
    for (const auto& [name, t] : engine.StateTensors()) {
      const Tensor host = ToHost(*t);
      for (int64_t i = 0; i < host.numel(); ++i) {
        ASSERT_TRUE(std::isfinite(host.data<float>()[i])) << name << " element " << i;
      }
    }
  }
}

TEST(Engine, SkipNanInSsgdLeavesTheOtherLearnersFinite) {
  auto source = PoisonedSource();
  EngineOptions o = Options("cpu:0,cpu:1", 1, "ssgd");
  o.skip_nan = true;
  Engine engine(Spec(false), o, source.get());
  EXPECT_EQ(engine.Iterate().skipped, 1);
  EXPECT_EQ(engine.Iterate().skipped, 0);
  for (double d : engine.DistancesToAverage()) EXPECT_TRUE(std::isfinite(d));
}

// What EngineCuda.HalfPrecisionsComputeOnRoundedInputs rests on: lifting every pixel by 0.45 of
// a bfloat16 (fp16) unit moves the first losses of the fp32 engine far more than engines on
// different devices differ in fp32 (1e-5), so that a GPU that rounds its convolution inputs is
// seen to be near the unlifted run and far from the lifted one.
TEST(Engine, LiftingIntegerPixelsOffTheHalfGridMovesTheFirstLosses) {
  for (int bits : {8, 11}) {
    const std::vector<double> on = FirstLossesOnLiftedIntegers("cpu:0", "fp32", bits, 0.0);
    const std::vector<double> lifted = FirstLossesOnLiftedIntegers("cpu:0", "fp32", bits, 0.45);
    EXPECT_GT(MaxDifference(on, lifted), kLiftedLossDistance) << bits << " bits";
    EXPECT_EQ(FirstLossesOnLiftedIntegers("cpu:0", "fp32", bits, 0.0), on);
  }
}

// Trials of one warm-up and two measured iterations, and at least `window_seconds`.
AutotunerOptions ShortTrials(double window_seconds, int max_learners) {
  AutotunerOptions o;
  o.warmup_iterations = 1;
  o.window_iterations = 2;
  o.window_seconds = window_seconds;
  o.max_learners = max_learners;
  return o;
}

TEST(Engine, AutotunerLeavesTheEngineAtItsChoice) {
  auto source = Source(64, 4);
  Engine engine(Spec(false), Options("cpu:0-1", 1), source.get());
  AutotuneResult r = Autotuner(ShortTrials(0, 3)).Run(&engine);
  EXPECT_EQ(engine.learners_per_device(), r.learners_per_device);
  EXPECT_GE(r.decisions.size(), 2u);
  EXPECT_GT(r.decisions[0].images_per_second, 0);
  EXPECT_GT(engine.LearnerMemoryBytes(), 0u);
}

// Two iterations of this net take milliseconds: each setting's window is its minimum time.
TEST(Engine, AutotunerMeasuresEachSettingForItsWindowSeconds) {
  auto source = Source(64, 4);
  Engine engine(Spec(false), Options("cpu:0-1", 1), source.get());
  const AutotunerOptions o = ShortTrials(0.25, 2);
  const auto start = std::chrono::steady_clock::now();
  AutotuneResult r = Autotuner(o).Run(&engine);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(r.decisions.back().action, "stop: max learners");
  EXPECT_GE(took.count(), 2 * o.window_seconds);
  // Many more than the 2 + 1 iterations a setting at batch 4 would otherwise train.
  EXPECT_GT(r.images_trained, 2 * 3 * 4 * 2);
}

TEST(Engine, RejectsBadOptions) {
  auto source = Source(8, 4);
  EXPECT_ERROR(Engine(Spec(false), Options("cpu:0", 2, "sgd"), source.get()), ValueError,
               "sync 'sgd' trains one learner");
  auto wrong = std::make_unique<ArraySource>(std::vector<float>(4 * 48), std::vector<int32_t>(4),
                                             Shape{3, 4, 4}, 2);
  EXPECT_ERROR(Engine(Spec(false), Options("cpu:0", 1), wrong.get()), ValueError,
               "the training source's examples have shape [3, 4, 4]");
}

}  // namespace
}  // namespace crossbow
