// Relu and ReluGradient on CUDA: one element-wise kernel each (relu_op.cu), safe in place.
#include "operators/relu_op_cuda.h"

#include "crossbow/core/context_cuda.h"
#include "operators/cudnn_utils_cuda.h"

namespace crossbow {
namespace {

class ReluCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    Tensor* y = Output(0);
    y->Resize(x.shape());
    cuda::LaunchRelu(x.data<float>(), x.numel(), y->mutable_data<float>(), context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }
};

// dX = dY where Y > 0, else 0 (from Relu's output, so that Relu may run in place).
class ReluGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& y = Input(0);
    EnforceInputShape(1, y.shape());
    Tensor* dx = Output(0);
    dx->Resize(y.shape());
    cuda::LaunchReluGradient(y.data<float>(), Input(1).data<float>(), y.numel(),
                             dx->mutable_data<float>(), context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Relu, ReluCudaOp);
REGISTER_CUDA_OPERATOR(ReluGradient, ReluGradientCudaOp);

}  // namespace crossbow
