// The cuDNN SpatialBN keeps the CPU operator's statistics (biased saved variance, running
// variance unbiased with the CPU's momentum) although cuDNN's own are an inverse standard
// deviation and a factor, and a CUDA graph of it updates the running statistics on every replay.
#include "crossbow/core/context_cuda.h"
#include "tests/cpp/cudnn_op_test_util.h"

namespace crossbow::testing {
namespace {

class SpatialBNCudnnTest : public CudnnOpTest {
 protected:
  void SetUp() override {
    CudnnOpTest::SetUp();
    if (IsSkipped()) return;
    cpu_.Feed("X", {4, 3, 5, 6}, {}, -2.f, 3.f);
    cpu_.Feed("scale", {3}, {}, 0.5f, 1.5f);
    cpu_.Feed("bias", {3});
    cpu_.Feed("rm", {3});
    cpu_.Feed("rv", {3}, {}, 0.5f, 1.5f);
    cpu_.Feed("dY", {4, 3, 5, 6});
    for (const char* name : {"X", "scale", "bias", "rm", "rv", "dY"}) gpu_->CopyFrom(cpu_, name);
  }

  const std::map<std::string, Argument> args_ = {{"epsilon", 1e-3}, {"momentum", 0.8}};
  OperatorDef train_ = MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"},
                                    {"Y", "rm", "rv", "sm", "sv"}, args_);
  OperatorDef grad_ = MakeOperator("SpatialBNGradient", {"X", "scale", "sm", "sv", "dY"},
                                   {"dX", "dscale", "dbias"}, args_);
};

TEST_F(SpatialBNCudnnTest, TrainingReplaysUpdateRunningStatistics) {
  OperatorBase* fwd = gpu_->Create(train_);
  OperatorBase* bwd = gpu_->Create(grad_);
  fwd->Run();
  bwd->Run();
  auto graph = gpu_->context().Capture([&] {
    fwd->Run();
    bwd->Run();
  });
  ASSERT_NE(graph, nullptr);
  graph->Replay();
  graph->Replay();
  for (int i = 0; i < 3; ++i) cpu_.Run({train_, grad_});
  for (const char* name : {"Y", "rm", "rv", "sm", "sv", "dX", "dscale", "dbias"}) {
    ExpectMatchesCpu(name);
  }
}

TEST_F(SpatialBNCudnnTest, TestModeUsesRunningStatistics) {
  auto args = args_;
  args["is_test"] = int64_t{1};
  const OperatorDef test =
      MakeOperator("SpatialBN", {"X", "scale", "bias", "rm", "rv"}, {"Y"}, args);
  gpu_->Create(test)->Run();
  cpu_.Run(test);
  ExpectMatchesCpu("Y");
  ExpectMatchesCpu("rm");
}

}  // namespace
}  // namespace crossbow::testing
