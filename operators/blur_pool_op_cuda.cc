// BlurPool and its gradient on CUDA: one thread an element (blur_pool_op.cu), with the CPU
// operators' shape rules and the arithmetic of blur_pool.h.
#include "operators/blur_pool_op_cuda.h"

#include "crossbow/core/context_cuda.h"
#include "operators/blur_pool_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

class BlurPoolCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    const Shape out = BlurPoolShape(def(), x.shape());
    Tensor* y = Output(0);
    y->Resize(out);
    cuda::LaunchBlurPool(x.data<float>(), out[0] * out[1], x.dim(2), x.dim(3), BlurStride(def()),
                         y->mutable_data<float>(), context_->stream());
    cuda::CheckLaunch(def(), "BlurPoolKernel");
  }
};

class BlurPoolGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Shape& x = Input(0).shape();
    EnforceInputShape(1, BlurPoolShape(def(), x));
    Tensor* dx = Output(0);
    dx->Resize(x);
    cuda::LaunchBlurPoolGradient(Input(1).data<float>(), x[0] * x[1], x[2], x[3], BlurStride(def()),
                                 dx->mutable_data<float>(), context_->stream());
    cuda::CheckLaunch(def(), "BlurPoolGradientKernel");
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(BlurPool, BlurPoolCudaOp);
REGISTER_CUDA_OPERATOR(BlurPoolGradient, BlurPoolGradientCudaOp);

}  // namespace crossbow
