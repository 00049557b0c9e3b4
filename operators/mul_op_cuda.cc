// Mul and MulGradient on CUDA (mul_op.cu), through the CPU's broadcast rule (MulLayout).
#include "operators/mul_op_cuda.h"

#include "crossbow/core/context_cuda.h"
#include "operators/mul_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

class MulCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const broadcast::Layout l = MulLayout(def(), Input(0).shape(), Input(1).shape());
    Tensor* y = Output(0);
    y->Resize(Input(0).shape());
    cuda::LaunchMul(l, Input(0).data<float>(), Input(1).data<float>(), y->mutable_data<float>(),
                    context_->stream());
    cuda::CheckLaunch(def(), "MulKernel");
  }
};

class MulGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const broadcast::Layout l = MulLayout(def(), Input(0).shape(), Input(1).shape());
    EnforceInputShape(2, Input(0).shape());
    float* da = nullptr;
    float* db = nullptr;
    if (HasOutput(0)) {
      Output(0)->Resize(Input(0).shape());
      da = Output(0)->mutable_data<float>();
    }
    if (HasOutput(1)) {
      Output(1)->Resize(Input(1).shape());
      db = Output(1)->mutable_data<float>();
    }
    cuda::LaunchMulGradient(l, Input(0).data<float>(), Input(1).data<float>(),
                            Input(2).data<float>(), da, db, context_->stream());
    cuda::CheckLaunch(def(), "the Mul gradient kernels");
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Mul, MulCudaOp);
REGISTER_CUDA_OPERATOR(MulGradient, MulGradientCudaOp);

}  // namespace crossbow
