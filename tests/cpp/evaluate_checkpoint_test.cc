// EvaluateCheckpoint (`crossbow eval`): the average model of a checkpoint, scored by the same
// rule as training's evaluations, so a diverged (NaN) model scores 0.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "crossbow/train/checkpoint.h"
#include "tests/cpp/engine_test_util.h"
#include "tests/cpp/scratch_dir.h"

namespace crossbow {
namespace {

class EvaluateCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto train = Source(32, 4);
    Engine engine(Spec(false), Options("cpu:0", 2), train.get());
    for (int i = 0; i < 4; ++i) engine.Iterate();
    trained_ = engine.Evaluate(test_.get());
    state_ = Snapshot(engine);
  }

  // Writes the engine's state, with `change` applied to z's copy, and evaluates it.
  template <typename F>
  EvalResult Evaluate(F&& change) {
    std::map<std::string, Tensor> state = state_;
    change(state);
    std::vector<std::pair<std::string, const Tensor*>> tensors;
    for (const auto& [name, t] : state) tensors.emplace_back(name, &t);
    const std::string path = CheckpointPath(ScratchDir("eval_ckpt"));
    CheckpointInfo info;
    info.net = Spec(false).name;
    info.sync = "sma";
    info.learners_per_device = 2;
    info.iteration = 4;
    WriteCheckpoint(path, info, "", tensors);
    return EvaluateCheckpoint(Spec(false), path, test_.get());
  }

  std::unique_ptr<ArraySource> test_ = Source(12, 5, /*seed=*/2);
  EvalResult trained_;
  std::map<std::string, Tensor> state_;
};

TEST_F(EvaluateCheckpointTest, ScoresTheAverageModelAsTrainingDoes) {
  const EvalResult r = Evaluate([](auto&) {});
  EXPECT_DOUBLE_EQ(r.loss, trained_.loss);
  EXPECT_DOUBLE_EQ(r.top1, trained_.top1);
  EXPECT_DOUBLE_EQ(r.top5, trained_.top5);
  EXPECT_EQ(r.top5, 1.0);  // 4 classes: every finite row is a top-5 hit
}

TEST_F(EvaluateCheckpointTest, ADivergedModelScoresZero) {
  const EvalResult r = Evaluate(
      [](auto& state) { state.at("z/fb").template mutable_data<float>()[0] = std::nanf(""); });
  EXPECT_TRUE(std::isnan(r.loss));
  EXPECT_EQ(r.top1, 0.0);
  EXPECT_EQ(r.top5, 0.0);
}

TEST_F(EvaluateCheckpointTest, EqualScoresAreMissesAtTopOne) {
  const EvalResult r = Evaluate([](auto& state) {
    for (const char* name : {"z/fw", "z/fb"}) {
      Tensor& t = state.at(name);
      std::fill_n(t.template mutable_data<float>(), t.numel(), 0.f);
    }
  });
  EXPECT_NEAR(r.loss, std::log(4.0), 1e-6);
  EXPECT_EQ(r.top1, 0.0);
  EXPECT_EQ(r.top5, 1.0);
}

}  // namespace
}  // namespace crossbow
