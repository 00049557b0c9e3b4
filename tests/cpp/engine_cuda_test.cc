// The engine on GPUs: the same results as on the CPU, logical devices of one GPU, NCCL between
// GPUs, CUDA graph replay and running out of GPU memory. Skipped where no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/engine.h"
#include "tests/cpp/engine_test_util.h"
#include "tests/cpp/lifted_inputs.h"

namespace crossbow {
namespace {

#define CROSSBOW_NEED_GPUS(n)  \
  if (CudaDeviceCount() < (n)) \
  GTEST_SKIP() << "needs " << (n) << " GPU(s), found " << CudaDeviceCount()

// Starts `b` from `a`'s models (the GPU's fillers draw other numbers than the CPU's), trains
// both on twin sources, and expects the same losses and checkpoint tensors.
void ExpectSameTraining(Engine& a, Engine& b, int iterations, float tol) {
  b.RestoreState(Snapshot(a), a.iteration());
  for (int i = 0; i < iterations; ++i) {
    IterationResult ra = a.Iterate(), rb = b.Iterate();
    ASSERT_EQ(ra.images, rb.images);
    EXPECT_NEAR(ra.loss, rb.loss, tol) << "iteration " << i;
  }
  auto sa = Snapshot(a), sb = Snapshot(b);
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [name, t] : sa) ExpectNear(t, sb.at(name), tol, name);
}

TEST(EngineCuda, SmaOnAGpuEqualsTheCpu) {
  CROSSBOW_NEED_GPUS(1);
  auto s1 = Source(64, 4), s2 = Source(64, 4);
  Engine gpu(Spec(true), Options("cuda:0", 2), s1.get());
  Engine cpu(Spec(true), Options("cpu:0", 2), s2.get());
  ExpectSameTraining(gpu, cpu, 6, 1e-4f);
  auto dg = gpu.DistancesToAverage(), dc = cpu.DistancesToAverage();
  for (size_t j = 0; j < dg.size(); ++j) EXPECT_NEAR(dg[j], dc[j], 1e-4);
}

TEST(EngineCuda, SsgdAndSgdOnAGpuEqualTheCpu) {
  CROSSBOW_NEED_GPUS(1);
  for (std::string sync : {"ssgd", "sgd"}) {
    const int k = sync == "sgd" ? 1 : 3;
    auto s1 = Source(48, 4), s2 = Source(48, 4);
    Engine gpu(Spec(true), Options("cuda:0", k, sync), s1.get());
    Engine cpu(Spec(true), Options("cpu:0", k, sync), s2.get());
    ExpectSameTraining(gpu, cpu, 5, 1e-4f);
  }
}

TEST(EngineCuda, ModelAveragingOnAGpuEqualsTheCpu) {
  CROSSBOW_NEED_GPUS(1);
  for (std::string sync : {"localsgd", "diloco", "easgd", "sma"}) {
    SCOPED_TRACE(sync);
    auto s1 = Source(64, 4), s2 = Source(64, 4);
    EngineOptions g = Options("cuda:0", 2, sync), c = Options("cpu:0", 2, sync);
    g.sync_period = c.sync_period = 2;
    if (sync == "sma") g.central_momentum_type = c.central_momentum_type = "nesterov";
    Engine gpu(Spec(true), g, s1.get());
    Engine cpu(Spec(true), c, s2.get());
    ExpectSameTraining(gpu, cpu, 5, 1e-4f);
  }
}

// bf16 and fp16 convolutions (fp32 everywhere else) train as the CPU's fp32 does, within their
// rounding, through CUDA graphs.
TEST(EngineCuda, HalfPrecisionsTrainAsFp32Does) {
  CROSSBOW_NEED_GPUS(1);
  for (const auto& [precision, tol] : {std::pair{"bf16", 1e-2f}, std::pair{"fp16", 2e-3f}}) {
    SCOPED_TRACE(precision);
    auto s1 = Source(64, 4), s2 = Source(64, 4);
    EngineOptions half = Options("cuda:0", 2);
    half.precision = precision;
    Engine gpu(Spec(true), half, s1.get());
    Engine cpu(Spec(true), Options("cpu:0", 2), s2.get());
    ExpectSameTraining(gpu, cpu, 6, tol);
  }
}

// The bound above would pass a GPU that computes its convolutions in fp32 or TF32. On integer
// pixels lifted off the half grid by 0.45 of a unit, with weights of -1, 0 and 1, a convolution
// on half-precision copies computes the unlifted integers' results exactly: its first losses are
// the CPU's fp32 losses on the unlifted pixels (to fp32's rounding) and far from those on the
// lifted ones, which fp32 would give, and TF32 too in bf16 (its 11 bits keep the bf16 lift).
// In fp16, whose 11 bits TF32 shares, ConvCudnnTest's check that the results are fp16 values
// tells the two apart.
TEST(EngineCuda, HalfPrecisionsComputeOnRoundedInputs) {
  CROSSBOW_NEED_GPUS(1);
  for (const auto& [precision, bits] : {std::pair{"bf16", 8}, std::pair{"fp16", 11}}) {
    SCOPED_TRACE(precision);
    const std::vector<double> on = FirstLossesOnLiftedIntegers("cpu:0", "fp32", bits, 0.0);
    const std::vector<double> lifted = FirstLossesOnLiftedIntegers("cpu:0", "fp32", bits, 0.45);
    const std::vector<double> gpu = FirstLossesOnLiftedIntegers("cuda:0", precision, bits, 0.45);
    for (size_t i = 0; i < on.size(); ++i) {
      EXPECT_NEAR(gpu[i], on[i], 1e-5 * std::max(1.0, std::fabs(on[i]))) << "learner " << i;
    }
    EXPECT_GT(MaxDifference(gpu, lifted), kLiftedLossDistance / 2);
  }
}

TEST(EngineCuda, TwoLogicalDevicesOnOneGpuEqualOneDevice) {
  CROSSBOW_NEED_GPUS(1);
  auto s1 = Source(64, 4), s2 = Source(64, 4), s3 = Source(64, 4);
  Engine two(Spec(true), Options("cuda:0,cuda:0", 2), s1.get());
  Engine one(Spec(true), Options("cuda:0", 4), s2.get());
  Engine cpu(Spec(true), Options("cpu:0,cpu:1", 2), s3.get());
  two.RestoreState(Snapshot(cpu), 0);
  one.RestoreState(Snapshot(cpu), 0);
  for (int i = 0; i < 6; ++i) {
    const double loss = two.Iterate().loss;
    EXPECT_NEAR(loss, one.Iterate().loss, 1e-4) << i;
    EXPECT_NEAR(loss, cpu.Iterate().loss, 1e-4) << i;
  }
  auto a = Snapshot(two), b = Snapshot(one);
  for (const auto& [name, t] : a) ExpectNear(t, b.at(name), 1e-4f, name);
}

TEST(EngineCuda, NcclBetweenTwoGpusEqualsOneGpu) {
  CROSSBOW_NEED_GPUS(2);
  auto s1 = Source(64, 4), s2 = Source(64, 4);
  Engine two(Spec(true), Options("cuda:0,cuda:1", 2), s1.get());
  Engine one(Spec(true), Options("cuda:0", 4), s2.get());
  ExpectSameTraining(two, one, 6, 1e-4f);
}

TEST(EngineCuda, GraphReplayGivesTheSameLossesAsOperatorByOperator) {
  CROSSBOW_NEED_GPUS(1);
  LearnerSpec eager = Spec(true);
  eager.cuda_graphs = false;
  auto s1 = Source(64, 4), s2 = Source(64, 4);
  Engine replayed(Spec(true), Options("cuda:0", 2), s1.get());
  Engine plain(eager, Options("cuda:0", 2), s2.get());
  ExpectSameTraining(replayed, plain, 8, 1e-5f);
}

TEST(EngineCuda, CheckpointStateRestoresAndALearningRateDropRestartsFromZ) {
  CROSSBOW_NEED_GPUS(1);
  auto s1 = Source(64, 4);
  Engine a(Spec(true), Options("cuda:0", 2), s1.get());
  for (int i = 0; i < 3; ++i) a.Iterate();
  auto saved = Snapshot(a);
  auto s2 = Source(64, 4);
  s2->RestoreState(s1->SaveState());
  Engine b(Spec(true), Options("cuda:0", 2), s2.get());
  b.RestoreState(saved, a.iteration());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a.Iterate().loss, b.Iterate().loss, 1e-6);
  a.SetLearningRate(0.001);
  for (double d : a.DistancesToAverage()) EXPECT_EQ(d, 0.0);
}

// Takes GPU memory until none is left; gives it back when destroyed.
struct GpuHog {
  explicit GpuHog(int gpu) {
    for (size_t chunk : {size_t{1} << 30, size_t{1} << 26, size_t{1} << 21, size_t{1} << 16,
                         size_t{1} << 12, size_t{1} << 9}) {
      try {
        for (;;) held.push_back(AllocateOn(Device{DeviceType::kCUDA, gpu}, chunk));
      } catch (const OutOfMemoryError&) {
      }
    }
  }
  std::vector<std::shared_ptr<uint8_t>> held;
};

TEST(EngineCuda, LearnersThatDoNotFitLeaveTheEngineAsItWas) {
  CROSSBOW_NEED_GPUS(1);
  auto source = Source(64, 4);
  Engine engine(Spec(true), Options("cuda:0", 1), source.get());
  for (int i = 0; i < 2; ++i) engine.Iterate();
  {
    GpuHog hog(0);
    AutotunerOptions o;
    o.warmup_iterations = 0;
    o.window_iterations = 1;
    o.window_seconds = 0;
    o.max_learners = 4;
    // The budget (cudaMemGetInfo) says no before anything is tried ...
    AutotuneResult r = Autotuner(o).Run(&engine);
    EXPECT_EQ(r.decisions.back().action, "stop: memory");
    EXPECT_EQ(engine.learners_per_device(), 1);
    // ... and without it, adding a learner runs out of memory and the engine keeps one.
    o.memory_limit_bytes = size_t{1} << 50;
    r = Autotuner(o).Run(&engine);
    EXPECT_EQ(r.decisions.back().action, "stop: out of memory");
    EXPECT_EQ(r.learners_per_device, 1);
    EXPECT_EQ(engine.learners_per_device(), 1);
    EXPECT_TRUE(std::isfinite(engine.Iterate().loss));
  }
  engine.SetLearnersPerDevice(2);
  EXPECT_EQ(engine.Iterate().learner_losses.size(), 2u);
}

}  // namespace
}  // namespace crossbow
