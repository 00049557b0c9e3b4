// What the CPU-vs-CUDA parity test does not show of the cuDNN convolution: algorithms and
// scratch are settled on the first run, so that a CUDA graph of later runs allocates nothing and
// replays correctly; a new shape chooses again; tf32 stays near fp32, bf16 and fp16 compute on
// half-precision copies, and fp16 keeps gradients far below its smallest normal number; bad
// shapes are ValueErrors on the GPU too.
#include <cmath>
#include <utility>
#include <vector>

#include "crossbow/core/context_cuda.h"
#include "crossbow/core/precision.h"
#include "tests/cpp/cudnn_op_test_util.h"
#include "tests/cpp/half_checks.h"

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

// In bf16 and fp16 a convolution computes on half-precision copies of X, W and dY and writes Y
// (before the bias), dW and dX in that precision: each is the CPU's fp32 result on the rounded
// inputs, rounded; a value of the type; and far enough from the fp32 result on the inputs as
// given that a convolution in fp32 or TF32 fails (half_checks.h; half_checks_test.cc shows it
// on the CPU). db sums dY in fp32.
TEST_F(ConvCudnnTest, HalfPrecisionsComputeOnHalfCopies) {
  const OperatorDef forward = MakeOperator("Conv", {"X", "W"}, {"Y"}, kArgs);
  for (Precision half : {Precision::kBF16, Precision::kFP16}) {
    SCOPED_TRACE(PrecisionName(half));
    gpu_->context().set_precision(half);
    Feed({4, 64, 16, 16});
    cpu_.Run(forward);  // Y without the bias, which is added in fp32
    OpHarness rounded;
    for (const char* name : {"X", "W", "dY"}) {
      rounded.Feed(name, cpu_.ShapeOf(name), RoundedToHalf(cpu_.Fetch(name), half));
    }
    rounded.Run(forward);
    rounded.Run(grad_);
    gpu_->Create(forward)->Run();
    gpu_->Create(grad_)->Run();
    for (const char* name : {"Y", "dW", "dX"}) {
      ExpectHalfPrecisionResult(gpu_->Fetch(name), rounded.Fetch(name), cpu_.Fetch(name), half,
                                name);
    }
    ExpectMatchesCpu("db");
  }
}

// The relative error of `got` in the L2 norm: ||got - want|| / ||want||.
double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (got[i] - want[i]) * double(got[i] - want[i]);
    norm += want[i] * double(want[i]);
  }
  return std::sqrt(diff / norm);
}

// Gradients of 1e-7 are subnormal in fp16 (normal numbers start at 6e-5, subnormals are 6e-8
// apart): unscaled they would keep one or two significant bits. The per-call power-of-two
// scaling of dY keeps fp16's full precision, in a CUDA graph too.
TEST_F(ConvCudnnTest, Fp16KeepsGradientsFarBelowItsSmallestNormal) {
  gpu_->context().set_precision(Precision::kFP16);
  Feed({4, 64, 16, 16});
  std::vector<float> dy = cpu_.Fetch("dY");
  for (float& v : dy) v *= 1e-7f;
  cpu_.Feed("dY", cpu_.ShapeOf("dY"), dy);
  cpu_.Run(grad_);
  gpu_->CopyFrom(cpu_, "dY");
  OperatorBase* bwd = gpu_->Create(grad_);
  bwd->Run();
  const auto expect_precise = [&] {
    for (const char* name : {"dW", "dX"}) {
      EXPECT_LT(RelativeError(gpu_->Fetch(name), cpu_.Fetch(name)), 2e-3) << name;
    }
  };
  expect_precise();
  gpu_->context().Synchronize();
  auto graph = gpu_->context().Capture([&] { bwd->Run(); });
  ASSERT_NE(graph, nullptr);
  for (const char* name : {"dW", "dX"}) gpu_->Poison(name);
  graph->Replay();
  expect_precise();
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
