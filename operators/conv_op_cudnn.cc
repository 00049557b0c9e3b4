// Conv and ConvGradient on cuDNN. Algorithms are chosen from cuDNN's heuristics (host work only)
// when an operator first meets a shape, and the scratch memory they need is reserved then, so
// that later runs (and CUDA graph captures of them) allocate nothing. In precision fp32,
// convolutions run in FMA math: no TF32, so that results match the CPU's to 1e-4; in tf32 they
// may use TF32 tensor cores.
#include <algorithm>
#include <vector>

#include "crossbow/core/context_cuda.h"
#include "crossbow/core/precision.h"
#include "operators/conv_op.h"
#include "operators/cudnn_utils_cuda.h"

namespace crossbow {
namespace {

using cudnn::kOne;
using cudnn::kZero;

// Algorithms needing more scratch than this are passed over: every learner on a GPU holds its
// own scratch, and small batches (Crossbow's case) rarely gain from more.
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;

cudnnMathType_t MathType(Precision precision) {
  return precision == Precision::kTF32 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
}

// The first algorithm in cuDNN's ranking that runs within the workspace limit, and in fp32
// without tensor-op math. The descriptor's FMA math type is never changed to the ranking's,
// which is what keeps TF32 out; an entry that reports tensor-op math is passed over all the
// same.
template <typename Perf>
Perf PickAlgorithm(const std::vector<Perf>& ranked, int returned, const OperatorBase& op,
                   Precision precision, const char* direction) {
  const bool fp32 = precision == Precision::kFP32;
  for (int i = 0; i < returned; ++i) {
    const Perf& p = ranked[i];
    const bool tensor_op =
        p.mathType == CUDNN_TENSOR_OP_MATH || p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (p.status == CUDNN_STATUS_SUCCESS && !(fp32 && tensor_op) &&
        p.memory <= kMaxWorkspaceBytes) {
      return p;
    }
  }
  CROSSBOW_FAIL(cudnn::Describe(op), ": cuDNN offers no ", direction, " algorithm in ",
                fp32 ? "FP32 (FMA)" : PrecisionName(precision), " math within ",
                kMaxWorkspaceBytes >> 20, " MiB of workspace (", returned, " ranked)");
}

// The descriptors of one convolution on one input shape, shared by the forward and backward
// operators.
struct ConvDescriptors {
  void Set(const OperatorBase& op, const ConvParams& p, const Shape& x, const Shape& w,
           const Shape& y, Precision precision) {
    cudnn::SetNCHW(this->x, x, op);
    cudnn::SetNCHW(this->y, y, op);
    cudnn::SetNCHW(bias, {1, w[0], 1, 1}, op);
    cudnn::SetFilter(this->w, w, op);
    CUDNN_CHECK(
        cudnnSetConvolution2dDescriptor(conv, static_cast<int>(p.pad), static_cast<int>(p.pad),
                                        static_cast<int>(p.stride), static_cast<int>(p.stride),
                                        static_cast<int>(p.dilation), static_cast<int>(p.dilation),
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        cudnn::Describe(op));
    CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv, static_cast<int>(p.group)),
                cudnn::Describe(op));
    // CUDNN_DEFAULT_MATH would allow TF32 on Ampere and newer even in fp32.
    CUDNN_CHECK(cudnnSetConvolutionMathType(conv, MathType(precision)), cudnn::Describe(op));
    int n = 0, c = 0, h = 0, wd = 0;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(conv, this->x, this->w, &n, &c, &h, &wd),
                cudnn::Describe(op));
    CROSSBOW_ENFORCE(Shape({n, c, h, wd}) == y, cudnn::Describe(op), ": cuDNN computes output ",
                     ShapeString({n, c, h, wd}), ", ConvOutputShape ", ShapeString(y));
  }

  cudnn::TensorDescriptor x, y, bias;
  cudnn::FilterDescriptor w;
  cudnn::ConvolutionDescriptor conv;
};

cudnnConvolutionFwdAlgo_t ChooseForward(CUDAContext* context, const ConvDescriptors& d,
                                        const OperatorBase& op, size_t* workspace) {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> ranked(CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
  int returned = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(context->cudnn(), d.x, d.w, d.conv, d.y,
                                                     static_cast<int>(ranked.size()), &returned,
                                                     ranked.data()),
              cudnn::Describe(op));
  const auto best = PickAlgorithm(ranked, returned, op, context->precision(), "forward");
  size_t bytes = 0;
  CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(context->cudnn(), d.x, d.w, d.conv, d.y,
                                                      best.algo, &bytes),
              cudnn::Describe(op));
  *workspace = std::max(*workspace, std::max(bytes, best.memory));
  return best.algo;
}

cudnnConvolutionBwdDataAlgo_t ChooseBackwardData(CUDAContext* context, const ConvDescriptors& d,
                                                 const OperatorBase& op, size_t* workspace) {
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> ranked(CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
  int returned = 0;
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(context->cudnn(), d.w, d.y, d.conv, d.x,
                                                          static_cast<int>(ranked.size()),
                                                          &returned, ranked.data()),
              cudnn::Describe(op));
  const auto best = PickAlgorithm(ranked, returned, op, context->precision(), "backward-data");
  size_t bytes = 0;
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(context->cudnn(), d.w, d.y, d.conv, d.x,
                                                           best.algo, &bytes),
              cudnn::Describe(op));
  *workspace = std::max(*workspace, std::max(bytes, best.memory));
  return best.algo;
}

cudnnConvolutionBwdFilterAlgo_t ChooseBackwardFilter(CUDAContext* context, const ConvDescriptors& d,
                                                     const OperatorBase& op, size_t* workspace) {
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> ranked(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
  int returned = 0;
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(context->cudnn(), d.x, d.y, d.conv, d.w,
                                                            static_cast<int>(ranked.size()),
                                                            &returned, ranked.data()),
              cudnn::Describe(op));
  const auto best = PickAlgorithm(ranked, returned, op, context->precision(), "backward-filter");
  size_t bytes = 0;
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(context->cudnn(), d.x, d.y, d.conv,
                                                             d.w, best.algo, &bytes),
              cudnn::Describe(op));
  *workspace = std::max(*workspace, std::max(bytes, best.memory));
  return best.algo;
}

// Y = conv(X, W) + b.
class ConvCudnnOp final : public Operator<CUDAContext> {
 public:
  ConvCudnnOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), params_(def) {}

  void Run() override {
    const Tensor& x = Input(0);
    const Tensor& w = Input(1);
    const bool bias = InputSize() == 3;
    if (x.shape() != x_shape_ || w.shape() != w_shape_ || (bias && Input(2).shape() != b_shape_)) {
      Prepare();
    }
    Tensor* y = Output(0);
    y->Resize(y_shape_);
    const cudnnHandle_t handle = context_->cudnn();
    CUDNN_CHECK(cudnnConvolutionForward(handle, &kOne, d_.x, x.data<float>(), d_.w, w.data<float>(),
                                        d_.conv, algo_, context_->Scratch(workspace_bytes_),
                                        workspace_bytes_, &kZero, d_.y, y->mutable_data<float>()),
                cudnn::Describe(*this));
    if (bias) {
      CUDNN_CHECK(cudnnAddTensor(handle, &kOne, d_.bias, Input(2).data<float>(), &kOne, d_.y,
                                 y->mutable_data<float>()),
                  cudnn::Describe(*this));
    }
  }

 private:
  // A new shape: descriptors, algorithm and its scratch memory (allocated here, not later).
  void Prepare() {
    const bool bias = InputSize() == 3;
    const Shape& x = Input(0).shape();
    const Shape& w = Input(1).shape();
    y_shape_ = ConvOutputShape(def(), params_, x, w, bias ? &Input(2).shape() : nullptr);
    d_.Set(*this, params_, x, w, y_shape_, context_->precision());
    workspace_bytes_ = 0;
    algo_ = ChooseForward(context_, d_, *this, &workspace_bytes_);
    context_->Scratch(workspace_bytes_);
    x_shape_ = x;
    w_shape_ = w;
    b_shape_ = bias ? Input(2).shape() : Shape{};
  }

  ConvParams params_;
  ConvDescriptors d_;
  Shape x_shape_, w_shape_, b_shape_, y_shape_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;
};

// (X, W, dY) -> (dW, db, dX); each unnamed output is not computed at all.
class ConvGradientCudnnOp final : public Operator<CUDAContext> {
 public:
  ConvGradientCudnnOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context), params_(def) {}

  void Run() override {
    const Tensor& x = Input(0);
    const Tensor& w = Input(1);
    const Tensor& dy = Input(2);
    if (x.shape() != x_shape_ || w.shape() != w_shape_) Prepare();
    EnforceInputShape(2, y_shape_);
    const cudnnHandle_t handle = context_->cudnn();
    if (HasOutput(0)) {
      Tensor* dw = Output(0);
      dw->Resize(w.shape());
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(
                      handle, &kOne, d_.x, x.data<float>(), d_.y, dy.data<float>(), d_.conv,
                      filter_algo_, context_->Scratch(workspace_bytes_), workspace_bytes_, &kZero,
                      d_.w, dw->mutable_data<float>()),
                  cudnn::Describe(*this));
    }
    if (HasOutput(1)) {
      Tensor* db = Output(1);
      db->Resize({w.dim(0)});
      CUDNN_CHECK(cudnnConvolutionBackwardBias(handle, &kOne, d_.y, dy.data<float>(), &kZero,
                                               d_.bias, db->mutable_data<float>()),
                  cudnn::Describe(*this));
    }
    if (HasOutput(2)) {
      Tensor* dx = Output(2);
      dx->Resize(x.shape());
      CUDNN_CHECK(
          cudnnConvolutionBackwardData(handle, &kOne, d_.w, w.data<float>(), d_.y, dy.data<float>(),
                                       d_.conv, data_algo_, context_->Scratch(workspace_bytes_),
                                       workspace_bytes_, &kZero, d_.x, dx->mutable_data<float>()),
          cudnn::Describe(*this));
    }
  }

 private:
  void Prepare() {
    const Shape& x = Input(0).shape();
    const Shape& w = Input(1).shape();
    y_shape_ = ConvOutputShape(def(), params_, x, w, nullptr);
    EnforceInputShape(2, y_shape_);
    d_.Set(*this, params_, x, w, y_shape_, context_->precision());
    workspace_bytes_ = 0;
    if (HasOutput(0)) filter_algo_ = ChooseBackwardFilter(context_, d_, *this, &workspace_bytes_);
    if (HasOutput(2)) data_algo_ = ChooseBackwardData(context_, d_, *this, &workspace_bytes_);
    context_->Scratch(workspace_bytes_);
    x_shape_ = x;
    w_shape_ = w;
  }

  ConvParams params_;
  ConvDescriptors d_;
  Shape x_shape_, w_shape_, y_shape_;
  cudnnConvolutionBwdFilterAlgo_t filter_algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
  cudnnConvolutionBwdDataAlgo_t data_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t workspace_bytes_ = 0;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Conv, ConvCudnnOp);
REGISTER_CUDA_OPERATOR(ConvGradient, ConvGradientCudnnOp);

}  // namespace crossbow
