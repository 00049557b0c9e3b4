// What the CPU-vs-CUDA parity test does not show of the cuDNN convolution: algorithms and
// scratch are settled on the first run, so that a CUDA graph of later runs allocates nothing and
// replays correctly; a new shape chooses again; precision tf32 stays near fp32; bad shapes are
// ValueErrors on the GPU too.
#include "crossbow/core/context_cuda.h"
#include "tests/cpp/cudnn_op_test_util.h"

namespace crossbow::testing {
namespace {

const std::map<std::string, Argument> kArgs = {
    {"kernel", int64_t{3}}, {"stride", int64_t{2}}, {"pad", int64_t{1}}, {"group", int64_t{2}}};

class ConvCudnnTest : public CudnnOpTest {
 protected:
  // Runs Conv and ConvGradient on the CPU for X of `x_shape` and copies the inputs to the GPU.
  void Feed(const Shape& x_shape) {
    cpu_.Feed("X", x_shape);
    cpu_.Feed("W", {6, x_shape[1] / 2, 3, 3});
    cpu_.Feed("b", {6});
    cpu_.Run(conv_);
    cpu_.Feed("dY", cpu_.ShapeOf("Y"));
    cpu_.Run(grad_);
    for (const char* name : {"X", "W", "b", "dY"}) gpu_->CopyFrom(cpu_, name);
  }
  void ExpectAllMatch() {
    for (const char* name : {"Y", "dW", "db", "dX"}) ExpectMatchesCpu(name);
  }

  OperatorDef conv_ = MakeOperator("Conv", {"X", "W", "b"}, {"Y"}, kArgs);
  OperatorDef grad_ = MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "db", "dX"}, kArgs);
};

TEST_F(ConvCudnnTest, GraphOfLaterRunsAllocatesNothingAndReplays) {
  Feed({2, 4, 9, 9});
  OperatorBase* fwd = gpu_->Create(conv_);
  OperatorBase* bwd = gpu_->Create(grad_);
  EXPECT_TRUE(fwd->Capturable());
  EXPECT_TRUE(bwd->Capturable());
  fwd->Run();
  bwd->Run();
  ExpectAllMatch();

  gpu_->context().Synchronize();
  const auto before = cuda::AllocatorStats(0);
  auto graph = gpu_->context().Capture([&] {
    fwd->Run();
    bwd->Run();
  });
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(cuda::AllocatorStats(0), before) << "a captured run allocated";
  for (const char* name : {"Y", "dW", "db", "dX"}) gpu_->Poison(name);
  graph->Replay();
  ExpectAllMatch();
}

TEST_F(ConvCudnnTest, NewShapeChoosesAgain) {
  Feed({2, 4, 9, 9});
  OperatorBase* fwd = gpu_->Create(conv_);
  OperatorBase* bwd = gpu_->Create(grad_);
  fwd->Run();
  bwd->Run();
  Feed({3, 4, 6, 7});
  fwd->Run();
  bwd->Run();
  ExpectAllMatch();
}

TEST_F(ConvCudnnTest, OnlyTheNamedGradientsAreComputed) {
  Feed({2, 4, 9, 9});
  gpu_->Create(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"dW", "", ""}, kArgs))->Run();
  ExpectMatchesCpu("dW");
  gpu_->Create(MakeOperator("ConvGradient", {"X", "W", "dY"}, {"", "db", "dX"}, kArgs))->Run();
  ExpectMatchesCpu("db");
  ExpectMatchesCpu("dX");
}

// TF32 keeps 10 bits of mantissa: over 288 products per output the results stay within 5e-3
// of the CPU's fp32 (in fp32 the other tests hold them to 1e-4).
TEST_F(ConvCudnnTest, Tf32StaysNearTheCpusFp32) {
  gpu_->context().set_precision(Precision::kTF32);
  Feed({4, 64, 16, 16});
  gpu_->Create(conv_)->Run();
  gpu_->Create(grad_)->Run();
  for (const char* name : {"Y", "dW", "db", "dX"}) ExpectMatchesCpu(name, 5e-3f);
}

TEST_F(ConvCudnnTest, BadWeightShapeIsAValueError) {
  Feed({2, 4, 9, 9});
  cpu_.Feed("W", {6, 3, 3, 3});
  gpu_->CopyFrom(cpu_, "W");
  OperatorBase* fwd = gpu_->Create(conv_);
  ExpectValueError([&] { fwd->Run(); }, {"Conv", "input 1 'W'", "[6, 3, 3, 3]"});
}

}  // namespace
}  // namespace crossbow::testing
