// MaxPool, AveragePool, GlobalAveragePool and their gradients on cuDNN, with the CPU operators'
// windows (ComputePoolWindow: floor-mode output, symmetric padding) and average modes.
//
// MaxPool's optional second output (the CPU's oneDNN workspace) is kept for the schema's sake:
// on CUDA it is zero-filled int32 [N, C, OH, OW], and MaxPoolGradient finds each window's winner
// again from X and Y (cuDNN's deterministic max mode), checking only the workspace's shape.
#include "crossbow/core/context_cuda.h"
#include "operators/cudnn_utils_cuda.h"
#include "operators/pool_op.h"

namespace crossbow {
namespace {

using cudnn::kOne;
using cudnn::kZero;

cudnnPoolingMode_t PoolingMode(const OperatorDef& def, PoolKind kind) {
  if (kind == PoolKind::kMax) return CUDNN_POOLING_MAX_DETERMINISTIC;
  return def.Arg<bool>("count_include_pad", false) ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                   : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
}

// The pooling and tensor descriptors of one operator on its current input shape.
class PoolDescriptors {
 public:
  // Rebuilds the descriptors when X's shape changed since the last call.
  void Update(const OperatorBase& op, PoolKind kind, const Shape& x) {
    if (x == x_shape_) return;
    const PoolWindow w = ComputePoolWindow(op.def(), kind, x);
    cudnn::SetNCHW(x_desc_, x, op);
    cudnn::SetNCHW(y_desc_, w.output, op);
    CUDNN_CHECK(
        cudnnSetPooling2dDescriptor(pool_, PoolingMode(op.def(), kind), CUDNN_PROPAGATE_NAN,
                                    static_cast<int>(w.kernel[0]), static_cast<int>(w.kernel[1]),
                                    static_cast<int>(w.padding[0]), static_cast<int>(w.padding[1]),
                                    static_cast<int>(w.strides[0]), static_cast<int>(w.strides[1])),
        cudnn::Describe(op));
    int n = 0, c = 0, h = 0, wd = 0;
    CUDNN_CHECK(cudnnGetPooling2dForwardOutputDim(pool_, x_desc_, &n, &c, &h, &wd),
                cudnn::Describe(op));
    CROSSBOW_ENFORCE(Shape({n, c, h, wd}) == w.output, cudnn::Describe(op),
                     ": cuDNN computes output ", ShapeString({n, c, h, wd}), ", ComputePoolWindow ",
                     ShapeString(w.output));
    x_shape_ = x;
    y_shape_ = w.output;
  }

  const Shape& y_shape() const { return y_shape_; }
  cudnnTensorDescriptor_t x() const { return x_desc_; }
  cudnnTensorDescriptor_t y() const { return y_desc_; }
  cudnnPoolingDescriptor_t pool() const { return pool_; }

 private:
  Shape x_shape_, y_shape_;
  cudnn::TensorDescriptor x_desc_, y_desc_;
  cudnn::PoolingDescriptor pool_;
};

template <PoolKind kKind>
class PoolCudnnOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    desc_.Update(*this, kKind, x.shape());
    Tensor* y = Output(0);
    y->Resize(desc_.y_shape());
    CUDNN_CHECK(cudnnPoolingForward(context_->cudnn(), desc_.pool(), &kOne, desc_.x(),
                                    x.data<float>(), &kZero, desc_.y(), y->mutable_data<float>()),
                cudnn::Describe(*this));
    if (kKind == PoolKind::kMax && HasOutput(1)) {
      Tensor* workspace = Output(1);
      workspace->Resize(desc_.y_shape(), DataType::kInt32);
      CUDA_CHECK(cudaMemsetAsync(workspace->raw_data(), 0, workspace->nbytes(), context_->stream()),
                 cudnn::Describe(*this));
    }
  }

 private:
  PoolDescriptors desc_;
};

// MaxPoolGradient(X, Y, dY, workspace) and the average poolings' (X, dY) -> dX.
template <PoolKind kKind>
class PoolGradientCudnnOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    constexpr bool kMax = kKind == PoolKind::kMax;
    const Tensor& x = Input(0);
    desc_.Update(*this, kKind, x.shape());
    const int dy_index = kMax ? 2 : 1;
    EnforceInputShape(dy_index, desc_.y_shape());
    if (kMax) {
      EnforceInputShape(1, desc_.y_shape());
      EnforceInputShape(3, desc_.y_shape());
    }
    const float* dy = Input(dy_index).data<float>();
    // Average pooling reads no values of Y; cuDNN still takes a pointer, and dY has Y's shape.
    const float* y = kMax ? Input(1).data<float>() : dy;
    Tensor* dx = Output(0);
    dx->Resize(x.shape());
    CUDNN_CHECK(cudnnPoolingBackward(context_->cudnn(), desc_.pool(), &kOne, desc_.y(), y,
                                     desc_.y(), dy, desc_.x(), x.data<float>(), &kZero, desc_.x(),
                                     dx->mutable_data<float>()),
                cudnn::Describe(*this));
  }

 private:
  PoolDescriptors desc_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(MaxPool, PoolCudnnOp<PoolKind::kMax>);
REGISTER_CUDA_OPERATOR(AveragePool, PoolCudnnOp<PoolKind::kAverage>);
REGISTER_CUDA_OPERATOR(GlobalAveragePool, PoolCudnnOp<PoolKind::kGlobalAverage>);
REGISTER_CUDA_OPERATOR(MaxPoolGradient, PoolGradientCudnnOp<PoolKind::kMax>);
REGISTER_CUDA_OPERATOR(AveragePoolGradient, PoolGradientCudnnOp<PoolKind::kAverage>);
REGISTER_CUDA_OPERATOR(GlobalAveragePoolGradient, PoolGradientCudnnOp<PoolKind::kGlobalAverage>);

}  // namespace crossbow
