// The element-wise activations on CUDA: one kernel each way (eltwise_op.cu), safe in place.
#include "operators/eltwise_op_cuda.h"

#include "crossbow/core/context_cuda.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

template <cuda::Eltwise kF>
class EltwiseCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    Tensor* y = Output(0);
    y->Resize(x.shape());
    cuda::LaunchEltwise(kF, x.data<float>(), x.numel(), y->mutable_data<float>(),
                        context_->stream());
    cuda::CheckLaunch(def(), "an element-wise kernel");
  }
};

// From input 0, X or Y as the CPU operator of the same name reads it.
template <cuda::Eltwise kF>
class EltwiseGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& from = Input(0);
    EnforceInputShape(1, from.shape());
    Tensor* dx = Output(0);
    dx->Resize(from.shape());
    cuda::LaunchEltwiseGradient(kF, from.data<float>(), Input(1).data<float>(), from.numel(),
                                dx->mutable_data<float>(), context_->stream());
    cuda::CheckLaunch(def(), "an element-wise gradient kernel");
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Relu, EltwiseCudaOp<cuda::Eltwise::kRelu>);
REGISTER_CUDA_OPERATOR(ReluGradient, EltwiseGradientCudaOp<cuda::Eltwise::kRelu>);
REGISTER_CUDA_OPERATOR(Mish, EltwiseCudaOp<cuda::Eltwise::kMish>);
REGISTER_CUDA_OPERATOR(MishGradient, EltwiseGradientCudaOp<cuda::Eltwise::kMish>);
REGISTER_CUDA_OPERATOR(Sigmoid, EltwiseCudaOp<cuda::Eltwise::kSigmoid>);
REGISTER_CUDA_OPERATOR(SigmoidGradient, EltwiseGradientCudaOp<cuda::Eltwise::kSigmoid>);

}  // namespace crossbow
