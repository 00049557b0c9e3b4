#include "operators/add_op_cuda.h"

#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

// Y = X1 + ... + Xn, added left to right as on the CPU; Y may be X1 (or X2 for Add). AddRelu
// (kRelu) takes max(., 0) in the last addition's pass.
template <bool kRelu>
class SumCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& first = Input(0);
    for (int i = 1; i < InputSize(); ++i) EnforceInputShape(i, first.shape());
    Tensor* y = Output(0);
    if (InputSize() == 1) {
      cuda::CopyOnStream(def(), first, first.shape(), y, context_);
      return;
    }
    y->Resize(first.shape());
    float* out = y->mutable_data<float>();
    for (int i = 1; i < InputSize(); ++i) {
      cuda::LaunchAdd(i == 1 ? first.data<float>() : out, Input(i).data<float>(), out,
                      first.numel(), kRelu && i == InputSize() - 1, context_->stream());
      cuda::CheckLaunch(def(), "the add kernel");
    }
  }
};

// Y = X, byte for byte (any dtype).
class CopyCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;
  void Run() override {
    cuda::CopyOnStream(def(), Input(0), Input(0).shape(), Output(0), context_);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Add, SumCudaOp<false>);
REGISTER_CUDA_OPERATOR(AddRelu, SumCudaOp<true>);
REGISTER_CUDA_OPERATOR(Sum, SumCudaOp<false>);
REGISTER_CUDA_OPERATOR(Copy, CopyCudaOp);

}  // namespace crossbow
