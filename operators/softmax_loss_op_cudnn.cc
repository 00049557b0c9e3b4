// Softmax (cuDNN, accurate), SoftmaxWithLoss (cuDNN log-softmax, then the loss and the
// probabilities from it) and the gradients (softmax_loss_op.cu). Labels stay on the device: a
// label outside [0, C) makes the loss NaN instead of raising the CPU's ValueError, since reading
// the labels on the host would stall the stream and break CUDA graph capture.
#include "crossbow/core/context_cuda.h"
#include "operators/cudnn_utils_cuda.h"
#include "operators/softmax_loss_op.h"
#include "operators/softmax_loss_op_cuda.h"

namespace crossbow {
namespace {

using cudnn::kOne;

// The operator's mixed targets from input `first` on, their shapes checked (values stay on the
// device); none where `mixed` is false.
cuda::TargetMix Mix(const OperatorBase& op, bool mixed, int first) {
  if (!mixed) return {};
  const Tensor& label_b = op.Input(first);
  const Tensor& lam = op.Input(first + 1);
  EnforceMixInputs(op.def(), first, op.Input(0).shape(), {label_b.shape(), label_b.dtype()},
                   {lam.shape(), lam.dtype()});
  return {label_b.data<int32_t>(), lam.data<float>()};
}
using cudnn::kZero;

// An [N, C] matrix as the [N, C, 1, 1] tensor whose instances cuDNN's softmax normalises.
class RowsDescriptor {
 public:
  cudnnTensorDescriptor_t Get(const OperatorBase& op, const Shape& rows) {
    if (rows != shape_) {
      cudnn::SetNCHW(desc_, {rows[0], rows[1], 1, 1}, op);
      shape_ = rows;
    }
    return desc_;
  }

 private:
  Shape shape_;
  cudnn::TensorDescriptor desc_;
};

class SoftmaxCudnnOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    EnforceMatrix(def(), 0, x.shape());
    const cudnnTensorDescriptor_t desc = rows_.Get(*this, x.shape());
    Tensor* y = Output(0);
    y->Resize(x.shape());
    CUDNN_CHECK(
        cudnnSoftmaxForward(context_->cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                            &kOne, desc, x.data<float>(), &kZero, desc, y->mutable_data<float>()),
        cudnn::Describe(*this));
  }

 private:
  RowsDescriptor rows_;
};

// Our own kernel rather than cudnnSoftmaxBackward, which does not promise that dX may be dY.
class SoftmaxGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& y = Input(0);
    EnforceMatrix(def(), 0, y.shape());
    EnforceSameShape(def(), 1, Input(1).shape(), 0, y.shape());
    Tensor* dx = Output(0);
    dx->Resize(y.shape());
    cuda::SoftmaxGradient(y.data<float>(), Input(1).data<float>(), y.dim(0), y.dim(1),
                          dx->mutable_data<float>(), context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }
};

// The loss comes from cuDNN's log-softmax (accurate even where a probability underflows), and
// the probabilities are its exponentials, written over it once the loss has read it.
class SoftmaxWithLossCudnnOp final : public Operator<CUDAContext> {
 public:
  SoftmaxWithLossCudnnOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        smoothing_(LabelSmoothing(def)),
        mixed_(MixedTargets(def, 2)),
        log_prob_scratch_(context->device()) {}

  void Run() override {
    const Tensor& logits = Input(0);
    const Tensor& label = Input(1);
    EnforceScoresAndLabels(def(), logits.shape(), label.shape(), label.dtype());
    const cuda::TargetMix mix = Mix(*this, mixed_, 2);
    const int64_t n = logits.dim(0), c = logits.dim(1);
    const cudnnTensorDescriptor_t desc = rows_.Get(*this, logits.shape());
    Tensor* prob = HasOutput(0) ? Output(0) : &log_prob_scratch_;
    prob->Resize(logits.shape());
    const cudaStream_t stream = context_->stream();
    CUDNN_CHECK(cudnnSoftmaxForward(context_->cudnn(), CUDNN_SOFTMAX_LOG,
                                    CUDNN_SOFTMAX_MODE_INSTANCE, &kOne, desc, logits.data<float>(),
                                    &kZero, desc, prob->mutable_data<float>()),
                cudnn::Describe(*this));
    if (HasOutput(1)) {
      Output(1)->Resize({});
      cuda::SoftmaxLoss(prob->data<float>(), label.data<int32_t>(), n, c, smoothing_, mix,
                        Output(1)->mutable_data<float>(), stream);
      CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
    }
    if (HasOutput(0)) {
      cuda::Exp(prob->data<float>(), n * c, prob->mutable_data<float>(), stream);
      CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
    }
  }

 private:
  const float smoothing_;
  const bool mixed_;
  RowsDescriptor rows_;
  Tensor log_prob_scratch_;  // when prob is unnamed
};

class SoftmaxWithLossGradientCudaOp final : public Operator<CUDAContext> {
 public:
  SoftmaxWithLossGradientCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), smoothing_(LabelSmoothing(def)), mixed_(MixedTargets(def, 3)) {}

  void Run() override {
    const Tensor& prob = Input(0);
    const Tensor& label = Input(1);
    EnforceScoresAndLabels(def(), prob.shape(), label.shape(), label.dtype());
    EnforceScalar(def(), 2, Input(2).shape(), Input(2).dtype());
    const cuda::TargetMix mix = Mix(*this, mixed_, 3);
    Tensor* dx = Output(0);
    dx->Resize(prob.shape());
    cuda::SoftmaxWithLossGradient(prob.data<float>(), label.data<int32_t>(), Input(2).data<float>(),
                                  prob.dim(0), prob.dim(1), smoothing_, mix,
                                  dx->mutable_data<float>(), context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }

 private:
  const float smoothing_;
  const bool mixed_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Softmax, SoftmaxCudnnOp);
REGISTER_CUDA_OPERATOR(SoftmaxGradient, SoftmaxGradientCudaOp);
REGISTER_CUDA_OPERATOR(SoftmaxWithLoss, SoftmaxWithLossCudnnOp);
REGISTER_CUDA_OPERATOR(SoftmaxWithLossGradient, SoftmaxWithLossGradientCudaOp);

}  // namespace crossbow
