// SpatialBN and SpatialBNGradient on cuDNN (spatial mode, per channel), with the CPU operators'
// inputs and outputs: saved_var is the biased batch variance, not cuDNN's inverse standard
// deviation, so the forward converts cuDNN's and the gradient converts back
// (spatial_bn_op.cu). Running statistics are cuDNN's update with factor 1 - momentum, which
// matches running = momentum running + (1 - momentum) batch with the unbiased batch variance.
// SpatialBNRelu is SpatialBN followed by an in-place ReLU that writes a byte mask (Y > 0) for its
// gradient, which masks dY before cuDNN's backward pass.
#include "crossbow/core/context_cuda.h"
#include "operators/cudnn_utils_cuda.h"
#include "operators/spatial_bn_op.h"
#include "operators/spatial_bn_op_cuda.h"

namespace crossbow {
namespace {

using cudnn::kOne;
using cudnn::kZero;

// CUDNN_BATCHNORM_SPATIAL_PERSISTENT is faster but may overflow on some inputs.
constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

// X's descriptor and the [1, C, 1, 1] one derived from it for the statistics and parameters.
class BNDescriptors {
 public:
  void Update(const OperatorBase& op, const Shape& x) {
    if (x == x_shape_) return;
    cudnn::SetNCHW(x_, x, op);
    CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(channels_, x_, kMode), cudnn::Describe(op));
    x_shape_ = x;
  }
  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t channels() const { return channels_; }

 private:
  Shape x_shape_;
  cudnn::TensorDescriptor x_, channels_;
};

template <bool kRelu>
class SpatialBNCudnnOp final : public Operator<CUDAContext> {
 public:
  SpatialBNCudnnOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        epsilon_(Arg<float>("epsilon", 1e-5f)),
        momentum_(Arg<float>("momentum", 0.9f)),
        is_test_(Arg<bool>("is_test", false)),
        mean_scratch_(context->device()),
        inv_std_(context->device()) {
    CROSSBOW_ENFORCE_VALUE(is_test_ || OutputSize() == (kRelu ? 6 : 5), def.Label(),
                           ": training needs ", kRelu ? 6 : 5,
                           " outputs (Y, running_mean, running_var, saved_mean, saved_var",
                           kRelu ? ", mask" : "", "), got ", OutputSize());
  }

  void Run() override {
    Normalize();
    if (!kRelu) return;
    Tensor* y = Output(0);
    uint8_t* mask = nullptr;
    if (!is_test_) {
      Output(5)->Resize(y->shape(), DataType::kUInt8);
      mask = Output(5)->mutable_data<uint8_t>();
    }
    cuda::ReluWithMask(y->mutable_data<float>(), y->numel(), mask, context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }

 private:
  void Normalize() {
    const Tensor& x = Input(0);
    EnforceBNShapes(def(), [&](int i) -> const Shape& { return Input(i).shape(); }, {1, 2, 3, 4});
    desc_.Update(*this, x.shape());
    Tensor* y = Output(0);
    y->Resize(x.shape());
    const cudnnHandle_t handle = context_->cudnn();
    const float* scale = Input(1).data<float>();
    const float* bias = Input(2).data<float>();
    if (is_test_) {
      CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
                      handle, kMode, &kOne, &kZero, desc_.x(), x.data<float>(), desc_.x(),
                      y->mutable_data<float>(), desc_.channels(), scale, bias,
                      Input(3).data<float>(), Input(4).data<float>(), epsilon_),
                  cudnn::Describe(*this));
      return;
    }
    const int64_t c = x.dim(1);
    CROSSBOW_ENFORCE_VALUE(x.dim(0) * x.dim(2) * x.dim(3) > 1, def().Label(),
                           ": training needs more than one value per channel, input 0 '",
                           def().inputs[0], "' has shape ", ShapeString(x.shape()));
    Tensor* mean = OutputOr(this, 3, &mean_scratch_);
    mean->Resize({c});
    inv_std_.Resize({c});
    // Outputs 1 and 2 are inputs 3 and 4 (EnforceInplace): cuDNN updates them in place.
    CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
                    handle, kMode, &kOne, &kZero, desc_.x(), x.data<float>(), desc_.x(),
                    y->mutable_data<float>(), desc_.channels(), scale, bias,
                    1.0 - static_cast<double>(momentum_), Output(1)->mutable_data<float>(),
                    Output(2)->mutable_data<float>(), epsilon_, mean->mutable_data<float>(),
                    inv_std_.mutable_data<float>()),
                cudnn::Describe(*this));
    if (HasOutput(4)) {
      Output(4)->Resize({c});
      cuda::InvStdToVariance(inv_std_.data<float>(), epsilon_, c, Output(4)->mutable_data<float>(),
                             context_->stream());
      CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
    }
  }

  const float epsilon_, momentum_;
  const bool is_test_;
  BNDescriptors desc_;
  Tensor mean_scratch_;  // the batch mean when output 3 is unnamed
  Tensor inv_std_;       // cuDNN's saved 1 / sqrt(var + epsilon)
};

// (X, scale, saved_mean, saved_var, dY[, mask]) -> (dX, dscale, dbias); unnamed outputs go to
// scratch.
template <bool kRelu>
class SpatialBNGradientCudnnOp final : public Operator<CUDAContext> {
 public:
  SpatialBNGradientCudnnOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        epsilon_(Arg<float>("epsilon", 1e-5f)),
        inv_std_(context->device()),
        dx_scratch_(context->device()),
        dscale_scratch_(context->device()),
        dbias_scratch_(context->device()),
        masked_dy_(context->device()) {}

  void Run() override {
    const Tensor& x = Input(0);
    EnforceBNShapes(def(), [&](int i) -> const Shape& { return Input(i).shape(); }, {1, 2, 3});
    EnforceInputShape(4, x.shape());
    desc_.Update(*this, x.shape());
    const int64_t c = x.dim(1);
    inv_std_.Resize({c});
    cuda::VarianceToInvStd(Input(3).data<float>(), epsilon_, c, inv_std_.mutable_data<float>(),
                           context_->stream());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
    Tensor* dx = OutputOr(this, 0, &dx_scratch_);
    Tensor* dscale = OutputOr(this, 1, &dscale_scratch_);
    Tensor* dbias = OutputOr(this, 2, &dbias_scratch_);
    dx->Resize(x.shape());
    dscale->Resize({c});
    dbias->Resize({c});
    const float* dy = Input(4).data<float>();
    if (kRelu) {
      EnforceInputShape(5, x.shape());
      masked_dy_.Resize(x.shape());
      cuda::ApplyMask(dy, Input(5).data<uint8_t>(), x.numel(), masked_dy_.mutable_data<float>(),
                      context_->stream());
      CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
      dy = masked_dy_.data<float>();
    }
    CUDNN_CHECK(
        cudnnBatchNormalizationBackward(
            context_->cudnn(), kMode, &kOne, &kZero, &kOne, &kZero, desc_.x(), x.data<float>(),
            desc_.x(), dy, desc_.x(), dx->mutable_data<float>(), desc_.channels(),
            Input(1).data<float>(), dscale->mutable_data<float>(), dbias->mutable_data<float>(),
            epsilon_, Input(2).data<float>(), inv_std_.data<float>()),
        cudnn::Describe(*this));
  }

 private:
  const float epsilon_;
  BNDescriptors desc_;
  Tensor inv_std_;  // 1 / sqrt(saved_var + epsilon), as cuDNN takes it
  Tensor dx_scratch_, dscale_scratch_, dbias_scratch_;
  Tensor masked_dy_;  // SpatialBNRelu: dY where Y > 0, else 0
};

}  // namespace

REGISTER_CUDA_OPERATOR(SpatialBN, SpatialBNCudnnOp<false>);
REGISTER_CUDA_OPERATOR(SpatialBNGradient, SpatialBNGradientCudnnOp<false>);
REGISTER_CUDA_OPERATOR(SpatialBNRelu, SpatialBNCudnnOp<true>);
REGISTER_CUDA_OPERATOR(SpatialBNReluGradient, SpatialBNGradientCudnnOp<true>);

}  // namespace crossbow
