#include "operators/dropout_op_cuda.h"

#include "operators/dropout_op.h"
#include "operators/op_util_cuda.h"

namespace crossbow {
namespace {

float KeptScale(float ratio) { return 1.f / (1.f - ratio); }

// Inverted dropout with the CPU operator's rule (keep a unit when a uniform 32-bit word reaches
// ratio * 2^32), drawing the words on the device from the context's seed and random offset, so
// that every run, and every replay of a recorded graph, draws a new mask. Test mode: Y = X.
class DropoutCudaOp final : public Operator<CUDAContext> {
 public:
  DropoutCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        ratio_(CheckedRatio(def)),
        is_test_(Arg<bool>("is_test", false)) {}

  void Run() override {
    const Tensor& x = Input(0);
    Tensor* y = Output(0);
    if (is_test_) {
      cuda::CopyOnStream(def(), x, x.shape(), y, context_);
      return;
    }
    Tensor* mask = HasOutput(1) ? Output(1) : nullptr;
    y->Resize(x.shape());
    if (mask) mask->Resize(x.shape());
    const auto threshold = static_cast<uint32_t>(static_cast<double>(ratio_) * 4294967296.0);
    cuda::LaunchDropout(x.data<float>(), y->mutable_data<float>(),
                        mask ? mask->mutable_data<float>() : nullptr, x.numel(), threshold,
                        KeptScale(ratio_), context_->seed(), context_->random_offset(),
                        context_->stream());
    cuda::CheckLaunch(def(), "the dropout kernel");
  }

 private:
  const float ratio_;
  const bool is_test_;
};

// dX = dY * mask / (1 - ratio); dX = dY in test mode.
class DropoutGradientCudaOp final : public Operator<CUDAContext> {
 public:
  DropoutGradientCudaOp(const OperatorDef& def, Workspace* ws, CUDAContext* context)
      : Operator(def, ws, context),
        ratio_(CheckedRatio(def)),
        is_test_(Arg<bool>("is_test", false)) {
    CROSSBOW_ENFORCE_VALUE(is_test_ || InputSize() == 2, def.Label(),
                           ": training needs the mask as input 1");
  }

  void Run() override {
    const Tensor& dy = Input(0);
    Tensor* dx = Output(0);
    if (is_test_) {
      cuda::CopyOnStream(def(), dy, dy.shape(), dx, context_);
      return;
    }
    const Tensor& mask = Input(1);
    EnforceInputShape(0, mask.shape());
    dx->Resize(mask.shape());
    cuda::LaunchDropoutGradient(dy.data<float>(), mask.data<float>(), dx->mutable_data<float>(),
                                mask.numel(), KeptScale(ratio_), context_->stream());
    cuda::CheckLaunch(def(), "the dropout gradient kernel");
  }

 private:
  const float ratio_;
  const bool is_test_;
};

}  // namespace

REGISTER_CUDA_OPERATOR(Dropout, DropoutCudaOp);
REGISTER_CUDA_OPERATOR(DropoutGradient, DropoutGradientCudaOp);

}  // namespace crossbow
