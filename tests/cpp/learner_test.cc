#include "crossbow/engine/learner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <random>

#include "tests/cpp/expect_error.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

// A small CNN: conv -> bn -> relu -> global average pool -> fc -> softmax loss.
LearnerSpec SmallSpec() {
  LearnerSpec spec;
  spec.name = "small";
  spec.input_shape = {3, 8, 8};
  spec.init_net.ops = {MakeFiller("MSRAFill", "w", {16, 3, 3, 3}),
                       MakeFiller("ConstantFill", "s", {16}, {{"value", 1.0}}),
                       MakeFiller("ConstantFill", "b", {16}),
                       MakeFiller("ConstantFill", "rm", {16}),
                       MakeFiller("ConstantFill", "rv", {16}, {{"value", 1.0}}),
                       MakeFiller("XavierFill", "fw", {4, 16}),
                       MakeFiller("ConstantFill", "fb", {4})};
  spec.net.name = "small";
  spec.net.ops = {
      MakeOperator("Conv", {"data", "w"}, {"c"}, {{"kernel", int64_t{3}}, {"pad", int64_t{1}}}),
      MakeOperator("SpatialBN", {"c", "s", "b", "rm", "rv"}, {"n", "rm", "rv", "sm", "sv"}),
      MakeOperator("Relu", {"n"}, {"r"}),
      MakeOperator("GlobalAveragePool", {"r"}, {"g"}),
      MakeOperator("FC", {"g", "fw", "fb"}, {"logits"}),
      MakeOperator("SoftmaxWithLoss", {"logits", "label"}, {"prob", "loss"})};
  spec.params = {"w", "s", "b", "fw", "fb"};
  spec.state = {"rm", "rv"};
  spec.solver.lr = 0.1;
  spec.seed = 3;
  return spec;
}

struct Batch {
  std::vector<float> images;
  std::vector<int32_t> labels;
  Shape shape;
};

Batch MakeBatch(int n, uint32_t seed = 1) {
  Batch b{std::vector<float>(n * 3 * 8 * 8), std::vector<int32_t>(n), {n, 3, 8, 8}};
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 1.f);
  for (int i = 0; i < n; ++i) {
    b.labels[i] = i % 4;
    for (int j = 0; j < 3 * 64; ++j)
      b.images[i * 192 + j] = noise(rng) + (j / 64 == i % 3 ? 1.f : 0.f) + 0.5f * b.labels[i];
  }
  return b;
}

TEST(Learner, LossFallsOnAFixedBatch) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(8);
  float first = learner.Step(b.images.data(), b.shape, b.labels.data());
  float last = first;
  for (int i = 0; i < 30; ++i) last = learner.Step(b.images.data(), b.shape, b.labels.data());
  EXPECT_LT(last, 0.5f * first);
  EXPECT_EQ(learner.iteration(), 31);
  EvalResult eval = learner.Evaluate(b.images.data(), b.shape, b.labels.data());
  EXPECT_GE(eval.top5, eval.top1);
  EXPECT_TRUE(std::isfinite(eval.loss));
}

// Its SpatialBN and Relu become one SpatialBNRelu (which LossFallsOnAFixedBatch trains).
TEST(Learner, FusesBatchNormWithRelu) {
  Learner learner(SmallSpec());
  std::vector<std::string> types;
  for (const auto& op : learner.spec().net.ops) types.push_back(op.type);
  EXPECT_EQ(types, (std::vector<std::string>{"Conv", "SpatialBNRelu", "GlobalAveragePool", "FC",
                                             "SoftmaxWithLoss"}));
}

TEST(Learner, MemoryPlanReusesBuffers) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(16);
  learner.Step(b.images.data(), b.shape, b.labels.data());
  MemoryStats stats = learner.memory_stats();
  EXPECT_GT(stats.unplanned_bytes, 0u);
  // This net keeps nearly every activation for its backward pass, so reuse is modest here;
  // scripts/bench/bench_step.py reports the (much larger) saving on ResNet-32.
  EXPECT_LT(stats.planned_bytes, stats.unplanned_bytes);
}

TEST(Learner, NanLossStopsBeforeTheUpdate) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(4);
  // (A NaN pixel would not do: ReLU maps NaN to 0.)
  learner.Blob("fb")->mutable_data<float>()[1] = std::nanf("");
  std::vector<float> before(learner.Blob("fw")->data<float>(),
                            learner.Blob("fw")->data<float>() + learner.Blob("fw")->numel());
  try {
    learner.Step(b.images.data(), b.shape, b.labels.data());
    FAIL() << "NaN loss went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("iteration 0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::equal(before.begin(), before.end(), learner.Blob("fw")->data<float>()));
}

TEST(Learner, NanPixelsBehindAFiniteLossStopBeforeTheUpdate) {
  Learner learner(SmallSpec());  // has batch norm: NaN pixels leave the loss finite
  Batch b = MakeBatch(4);
  std::fill(b.images.begin(), b.images.end(), std::nanf(""));
  const Tensor before = ToHost(*learner.Blob("w"));
  try {
    learner.Step(b.images.data(), b.shape, b.labels.data());
    FAIL() << "NaN gradients went unnoticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gradients or batch-norm statistics are not finite"),
              std::string::npos)
        << e.what();
  }
  const Tensor& after = *learner.Blob("w");
  EXPECT_TRUE(
      std::equal(before.data<float>(), before.data<float>() + before.numel(), after.data<float>()));
}

TEST(Learner, EvaluateScoresADivergedModelZero) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(8);
  learner.Blob("fb")->mutable_data<float>()[2] = std::nanf("");  // every probability NaN
  EvalResult eval = learner.Evaluate(b.images.data(), b.shape, b.labels.data());
  EXPECT_EQ(eval.top1, 0.0);
  EXPECT_EQ(eval.top5, 0.0);  // 4 classes: any finite row would be a top-5 hit
}

TEST(Learner, EvaluateCountsTiesAgainstTheLabel) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(8);
  Tensor* fw = learner.Blob("fw");
  std::fill_n(fw->mutable_data<float>(), fw->numel(), 0.f);  // every class scores 1/4
  EvalResult eval = learner.Evaluate(b.images.data(), b.shape, b.labels.data());
  EXPECT_EQ(eval.top1, 0.0);
  EXPECT_EQ(eval.top5, 1.0);
}

TEST(Learner, WrongInputShapeNamesTheExpectedShape) {
  Learner learner(SmallSpec());
  Batch b = MakeBatch(2);
  try {
    learner.Step(b.images.data(), {2, 3, 4, 16}, b.labels.data());
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[N, 3, 8, 8]"), std::string::npos) << e.what();
  }
}

TEST(Learner, SaveAndLoadRestoreParametersAndStatistics) {
  Learner a(SmallSpec());
  Batch b = MakeBatch(8);
  for (int i = 0; i < 3; ++i) a.Step(b.images.data(), b.shape, b.labels.data());
  const std::string path = ScratchDir("learner") + "/weights.cbt";
  a.Save(path);
  LearnerSpec other = SmallSpec();
  other.seed = 99;
  Learner c(other);
  c.Load(path);
  for (const char* name : {"w", "fw", "rm", "rv"}) {
    const Tensor* x = a.Blob(name);
    EXPECT_TRUE(
        std::equal(x->data<float>(), x->data<float>() + x->numel(), c.Blob(name)->data<float>()))
        << name;
  }
  const float* pa = a.Predict(b.images.data(), b.shape).data<float>();
  std::vector<float> prob_a(pa, pa + 8 * 4);
  const float* pc = c.Predict(b.images.data(), b.shape).data<float>();
  for (int i = 0; i < 32; ++i) EXPECT_FLOAT_EQ(prob_a[i], pc[i]);
}

TEST(Learner, LoadRejectsAModelOfAnotherShape) {
  Learner a(SmallSpec());
  const std::string path = ScratchDir("learner_shape") + "/weights.cbt";
  a.Save(path);
  LearnerSpec wider = SmallSpec();
  wider.init_net.ops[5] = MakeFiller("XavierFill", "fw", {5, 16});
  wider.init_net.ops[6] = MakeFiller("ConstantFill", "fb", {5});
  Learner c(wider);
  EXPECT_ERROR(c.Load(path), ValueError,
               "blob 'fw' in '" + path + "' has shape [4, 16], model 'small' expects [5, 16]");
}

}  // namespace
}  // namespace crossbow
