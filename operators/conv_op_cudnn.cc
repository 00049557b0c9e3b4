// Conv and ConvGradient on cuDNN. Algorithms are chosen from cuDNN's heuristics (host work only)
// when an operator first meets a shape, and the scratch memory they need is reserved then, so
// that later runs (and CUDA graph captures of them) allocate nothing. In precision fp32,
// convolutions run in FMA math: no TF32, so that results match the CPU's to 1e-4; in tf32 they
// may use TF32 tensor cores. In bf16 and fp16 they compute on half-precision copies of their
// inputs, kept in the same scratch memory after cuDNN's workspace, and accumulate in fp32
// (cuDNN's pseudo-half configurations); fp16 scales dY per call (crossbow/core/precision.h).
#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "crossbow/core/context_cuda.h"
#include "crossbow/core/precision.h"
#include "operators/conv_op.h"
#include "operators/cudnn_utils_cuda.h"
#include "operators/half_precision_cuda.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

using cudnn::kOne;
using cudnn::kZero;

// Algorithms needing more scratch than this are passed over: every learner on a GPU holds its
// own scratch, and small batches (Crossbow's case) rarely gain from more.
constexpr size_t kMaxWorkspaceBytes = size_t{256} << 20;

cudnnMathType_t MathType(Precision precision) {
  return precision == Precision::kFP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

// The half type a convolution computes on in `precision`; none in fp32 and tf32.
std::optional<cuda::HalfType> HalfTypeOf(Precision precision) {
  switch (precision) {
    case Precision::kBF16:
      return cuda::HalfType::kBF16;
    case Precision::kFP16:
      return cuda::HalfType::kFP16;
    default:
      return std::nullopt;
  }
}

// The cuDNN type of the tensors a convolution computes on.
cudnnDataType_t DataType(std::optional<cuda::HalfType> half) {
  if (!half) return CUDNN_DATA_FLOAT;
  return *half == cuda::HalfType::kBF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

// One scratch allocation holding cuDNN's workspace (at offset 0) and then, in the half
// precisions, the converted copies: Reserve hands out aligned offsets, Bytes the size to ask
// the context for.
class ScratchPlan {
 public:
  ScratchPlan() = default;
  explicit ScratchPlan(size_t workspace_bytes) { Reserve(workspace_bytes); }
  size_t Reserve(size_t bytes) {
    constexpr size_t kAlignment = 256;
    const size_t at = bytes_;
    bytes_ += (bytes + kAlignment - 1) / kAlignment * kAlignment;
    return at;
  }
  size_t Bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

// Room for a half-precision copy of `n` values; its offset.
size_t ReserveHalf(ScratchPlan* plan, int64_t n) {
  return plan->Reserve(static_cast<size_t>(n) * 2);
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
    const cudnnDataType_t type = DataType(HalfTypeOf(precision));
    cudnn::SetNCHW(this->x, x, op, type);
    cudnn::SetNCHW(this->y, y, op, type);
    cudnn::SetNCHW(y_fp32, y, op);
    cudnn::SetNCHW(bias, {1, w[0], 1, 1}, op);
    cudnn::SetFilter(this->w, w, op, type);
    CUDNN_CHECK(
        cudnnSetConvolution2dDescriptor(conv, static_cast<int>(p.pad), static_cast<int>(p.pad),
                                        static_cast<int>(p.stride), static_cast<int>(p.stride),
                                        static_cast<int>(p.dilation), static_cast<int>(p.dilation),
                                        CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),  // accumulator
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

  cudnn::TensorDescriptor x, y, bias;  // x, y and w in the convolution's data type
  cudnn::TensorDescriptor y_fp32;      // Y (and dY) as the operators exchange them
  cudnn::FilterDescriptor w;
  cudnn::ConvolutionDescriptor conv;
};

// An algorithm and the workspace it needs.
struct Choice {
  int algo = 0;
  size_t workspace = 0;
};

// What a choice depends on: direction, GPU, precision, X's and W's shapes, stride, pad,
// dilation and group.
using ChoiceKey =
    std::tuple<std::string, int, Precision, Shape, Shape, int64_t, int64_t, int64_t, int64_t>;

// One query of cuDNN's heuristics per key in the process. A query can take seconds (in bf16
// cuDNN 9 finalises an engine configuration per candidate: 2.4 s for one backward-filter shape
// on an H200), and a ResNet repeats each shape in many layers and every learner. The lock is
// held through the query, so that learners starting together ask once.
Choice CachedChoice(const ChoiceKey& key, const std::function<Choice()>& choose) {
  static std::mutex mutex;
  static std::map<ChoiceKey, Choice> choices;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = choices.find(key);
  if (it == choices.end()) it = choices.emplace(key, choose()).first;
  return it->second;
}

// The algorithm of one direction: cuDNN's ranking (`rank`, a cudnnGet*Algorithm_v7), the pick
// and the workspace it needs (`size_of`, the matching cudnnGet*WorkspaceSize), on the
// direction's descriptors a, b, c in cuDNN's order; `*workspace` grows to cover it.
template <typename Algo, typename Perf, typename A, typename B, typename C>
Algo Choose(CUDAContext* context, const ConvParams& p, const Shape& x, const Shape& w,
            const OperatorBase& op, const char* direction, int count,
            cudnnStatus_t (*rank)(cudnnHandle_t, A, B, cudnnConvolutionDescriptor_t, C, int, int*,
                                  Perf*),
            cudnnStatus_t (*size_of)(cudnnHandle_t, A, B, cudnnConvolutionDescriptor_t, C, Algo,
                                     size_t*),
            A a, B b, cudnnConvolutionDescriptor_t conv, C c, size_t* workspace) {
  const ChoiceKey key{direction, context->gpu(), context->precision(), x,      w,
                      p.stride,  p.pad,          p.dilation,           p.group};
  const Choice choice = CachedChoice(key, [&] {
    const cudnnHandle_t h = context->cudnn();
    std::vector<Perf> ranked(count);
    int returned = 0;
    CUDNN_CHECK(rank(h, a, b, conv, c, count, &returned, ranked.data()), cudnn::Describe(op));
    const Perf best = PickAlgorithm(ranked, returned, op, context->precision(), direction);
    size_t bytes = 0;
    CUDNN_CHECK(size_of(h, a, b, conv, c, best.algo, &bytes), cudnn::Describe(op));
    return Choice{static_cast<int>(best.algo), std::max(bytes, best.memory)};
  });
  *workspace = std::max(*workspace, choice.workspace);
  return static_cast<Algo>(choice.algo);
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
    auto* scratch = static_cast<uint8_t*>(context_->Scratch(plan_.Bytes()));
    const void* x_in = x.data<float>();
    const void* w_in = w.data<float>();
    void* y_out = y->mutable_data<float>();
    if (half_) {
      const cudaStream_t stream = context_->stream();
      cuda::LaunchToHalf(x.data<float>(), scratch + x_at_, x.numel(), *half_, nullptr, stream);
      cuda::LaunchToHalf(w.data<float>(), scratch + w_at_, w.numel(), *half_, nullptr, stream);
      cuda::CheckLaunch(def(), "the conversion to half precision");
      x_in = scratch + x_at_;
      w_in = scratch + w_at_;
      y_out = scratch + y_at_;
    }
    CUDNN_CHECK(cudnnConvolutionForward(handle, &kOne, d_.x, x_in, d_.w, w_in, d_.conv, algo_,
                                        scratch, workspace_bytes_, &kZero, d_.y, y_out),
                cudnn::Describe(*this));
    if (half_) {
      cuda::LaunchFromHalf(y_out, y->mutable_data<float>(), y->numel(), *half_, nullptr,
                           context_->stream());
      cuda::CheckLaunch(def(), "the conversion from half precision");
    }
    if (bias) {
      CUDNN_CHECK(cudnnAddTensor(handle, &kOne, d_.bias, Input(2).data<float>(), &kOne, d_.y_fp32,
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
    const Precision precision = context_->precision();
    d_.Set(*this, params_, x, w, y_shape_, precision);
    workspace_bytes_ = 0;
    algo_ = Choose(context_, params_, x, w, *this, "forward", CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                   cudnnGetConvolutionForwardAlgorithm_v7, cudnnGetConvolutionForwardWorkspaceSize,
                   d_.x.get(), d_.w.get(), d_.conv.get(), d_.y.get(), &workspace_bytes_);
    plan_ = ScratchPlan(workspace_bytes_);
    half_ = HalfTypeOf(precision);
    if (half_) {
      x_at_ = ReserveHalf(&plan_, NumElements(x));
      w_at_ = ReserveHalf(&plan_, NumElements(w));
      y_at_ = ReserveHalf(&plan_, NumElements(y_shape_));
    }
    context_->Scratch(plan_.Bytes());
    x_shape_ = x;
    w_shape_ = w;
    b_shape_ = bias ? Input(2).shape() : Shape{};
  }

  ConvParams params_;
  ConvDescriptors d_;
  Shape x_shape_, w_shape_, b_shape_, y_shape_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_bytes_ = 0;  // at the start of the scratch memory
  ScratchPlan plan_;
  std::optional<cuda::HalfType> half_;     // the type of the copies, in bf16 and fp16
  size_t x_at_ = 0, w_at_ = 0, y_at_ = 0;  // the half copies' offsets
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
    const cudaStream_t stream = context_->stream();
    auto* scratch = static_cast<uint8_t*>(context_->Scratch(plan_.Bytes()));
    // The inputs as the convolution reads them, and where its results land before conversion.
    const void* x_in = x.data<float>();
    const void* w_in = w.data<float>();
    const void* dy_in = dy.data<float>();
    float* scale = nullptr;  // dY's, in fp16
    if (half_) {
      if (*half_ == cuda::HalfType::kFP16) {
        scale = reinterpret_cast<float*>(scratch + scale_at_);
        cuda::LaunchPowerOfTwoScale(dy.data<float>(), dy.numel(), scale,
                                    reinterpret_cast<unsigned*>(scale + 1), stream);
      }
      cuda::LaunchToHalf(dy.data<float>(), scratch + dy_at_, dy.numel(), *half_, scale, stream);
      if (HasOutput(0)) {
        cuda::LaunchToHalf(x.data<float>(), scratch + x_at_, x.numel(), *half_, nullptr, stream);
      }
      if (HasOutput(2)) {
        cuda::LaunchToHalf(w.data<float>(), scratch + w_at_, w.numel(), *half_, nullptr, stream);
      }
      cuda::CheckLaunch(def(), "the conversion to half precision");
      x_in = scratch + x_at_;
      w_in = scratch + w_at_;
      dy_in = scratch + dy_at_;
    }
    // Where cuDNN writes the result for `out`: `out` itself, or in the half precisions the copy
    // at `half_at`, which `finish` converts into `out`, unscaled.
    const auto result = [&](Tensor* out, size_t half_at) -> void* {
      return half_ ? static_cast<void*>(scratch + half_at) : out->mutable_data<float>();
    };
    const auto finish = [&](Tensor* out, size_t half_at) {
      if (!half_) return;
      cuda::LaunchFromHalf(scratch + half_at, out->mutable_data<float>(), out->numel(), *half_,
                           scale, stream);
      cuda::CheckLaunch(def(), "the conversion from half precision");
    };
    if (HasOutput(0)) {
      Tensor* dw = Output(0);
      dw->Resize(w.shape());
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle, &kOne, d_.x, x_in, d_.y, dy_in, d_.conv,
                                                 filter_algo_, scratch, workspace_bytes_, &kZero,
                                                 d_.w, result(dw, dw_at_)),
                  cudnn::Describe(*this));
      finish(dw, dw_at_);
    }
    if (HasOutput(1)) {
      Tensor* db = Output(1);
      db->Resize({w.dim(0)});
      CUDNN_CHECK(cudnnConvolutionBackwardBias(handle, &kOne, d_.y_fp32, dy.data<float>(), &kZero,
                                               d_.bias, db->mutable_data<float>()),
                  cudnn::Describe(*this));
    }
    if (HasOutput(2)) {
      Tensor* dx = Output(2);
      dx->Resize(x.shape());
      CUDNN_CHECK(
          cudnnConvolutionBackwardData(handle, &kOne, d_.w, w_in, d_.y, dy_in, d_.conv, data_algo_,
                                       scratch, workspace_bytes_, &kZero, d_.x, result(dx, dx_at_)),
          cudnn::Describe(*this));
      finish(dx, dx_at_);
    }
  }

 private:
  void Prepare() {
    const Shape& x = Input(0).shape();
    const Shape& w = Input(1).shape();
    y_shape_ = ConvOutputShape(def(), params_, x, w, nullptr);
    EnforceInputShape(2, y_shape_);
    const Precision precision = context_->precision();
    d_.Set(*this, params_, x, w, y_shape_, precision);
    workspace_bytes_ = 0;
    if (HasOutput(0)) {
      filter_algo_ = Choose(context_, params_, x, w, *this, "backward-filter",
                            CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                            cudnnGetConvolutionBackwardFilterAlgorithm_v7,
                            cudnnGetConvolutionBackwardFilterWorkspaceSize, d_.x.get(), d_.y.get(),
                            d_.conv.get(), d_.w.get(), &workspace_bytes_);
    }
    if (HasOutput(2)) {
      data_algo_ = Choose(
          context_, params_, x, w, *this, "backward-data", CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
          cudnnGetConvolutionBackwardDataAlgorithm_v7, cudnnGetConvolutionBackwardDataWorkspaceSize,
          d_.w.get(), d_.y.get(), d_.conv.get(), d_.x.get(), &workspace_bytes_);
    }
    plan_ = ScratchPlan(workspace_bytes_);
    half_ = HalfTypeOf(precision);
    if (half_) {
      const int64_t xn = NumElements(x), wn = NumElements(w);
      x_at_ = ReserveHalf(&plan_, xn);
      w_at_ = ReserveHalf(&plan_, wn);
      dy_at_ = ReserveHalf(&plan_, NumElements(y_shape_));
      dw_at_ = ReserveHalf(&plan_, wn);
      dx_at_ = ReserveHalf(&plan_, xn);
      scale_at_ = plan_.Reserve(sizeof(float) + sizeof(unsigned));  // the scale, then its bits
    }
    context_->Scratch(plan_.Bytes());
    x_shape_ = x;
    w_shape_ = w;
  }

  ConvParams params_;
  ConvDescriptors d_;
  Shape x_shape_, w_shape_, y_shape_;
  cudnnConvolutionBwdFilterAlgo_t filter_algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
  cudnnConvolutionBwdDataAlgo_t data_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
  size_t workspace_bytes_ = 0;  // at the start of the scratch memory
  ScratchPlan plan_;
  std::optional<cuda::HalfType> half_;  // the type of the copies, in bf16 and fp16
  size_t x_at_ = 0, w_at_ = 0, dy_at_ = 0, dw_at_ = 0, dx_at_ = 0, scale_at_ = 0;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Conv, ConvCudnnOp);
REGISTER_CUDA_OPERATOR(ConvGradient, ConvGradientCudnnOp);

}  // namespace crossbow
