#include "operators/op_util_cuda.h"
#include "operators/reshape_op.h"

namespace crossbow {
namespace {

// Flatten, Reshape and ReshapeLike on the GPU: tensors there are row-major, so Y is X's bytes
// under the new shape, one device copy on the stream (never in place, as on the CPU: the
// gradients need X's shape).
class FlattenCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;
  void Run() override {
    const Tensor& x = Input(0);
    cuda::CopyOnStream(def(), x, FlattenedShape(def(), x.shape()), Output(0), context_);
  }
};

class ReshapeCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;
  void Run() override {
    const Tensor& x = Input(0);
    if (x.shape() != x_shape_) {
      y_shape_ = ReshapedShape(def(), x.shape());
      x_shape_ = x.shape();
    }
    cuda::CopyOnStream(def(), x, y_shape_, Output(0), context_);
  }

 private:
  Shape x_shape_, y_shape_;
};

class ReshapeLikeCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;
  void Run() override {
    const Tensor& dy = Input(0);
    const Tensor& x = Input(1);
    EnforceSameSize(def(), dy.shape(), x.shape());
    cuda::CopyOnStream(def(), dy, x.shape(), Output(0), context_);
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Flatten, FlattenCudaOp);
REGISTER_CUDA_OPERATOR(Reshape, ReshapeCudaOp);
REGISTER_CUDA_OPERATOR(ReshapeLike, ReshapeLikeCudaOp);

}  // namespace crossbow
