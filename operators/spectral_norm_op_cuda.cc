// SpectralNorm and its gradient on CUDA (spectral_norm_op.cu): sigma in one block, read on the
// device by the element-wise kernel after it, through the CPU's checks (SpectralNormShape).
#include "operators/spectral_norm_op_cuda.h"

#include "crossbow/core/context_cuda.h"
#include "operators/op_util_cuda.h"
#include "operators/spectral_norm_op.h"

namespace crossbow {
namespace {

class SpectralNormCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& w = Input(0);
    const SpectralNormDims d = SpectralNormShape(*this);
    EnforceSpectralNormOutputs(def(), d);
    if (d.power_iterations > 0) {
      cuda::LaunchPowerIteration(w.data<float>(), d.rows, d.cols, d.power_iterations, d.epsilon,
                                 Output(1)->mutable_data<float>(), Output(2)->mutable_data<float>(),
                                 context_->stream());
      cuda::CheckLaunch(def(), "PowerIterationKernel");
    }
    auto* scalars = static_cast<float*>(context_->Scratch(2 * sizeof(float)));
    cuda::LaunchSpectralSigma(w.data<float>(), nullptr, d.rows, d.cols, Input(1).data<float>(),
                              Input(2).data<float>(), scalars, context_->stream());
    cuda::CheckLaunch(def(), "SigmaKernel");
    Tensor* y = Output(0);
    y->Resize(w.shape());
    cuda::LaunchSpectralScale(w.data<float>(), w.numel(), scalars, y->mutable_data<float>(),
                              context_->stream());
    cuda::CheckLaunch(def(), "ScaleKernel");
  }
};

class SpectralNormGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& w = Input(0);
    const SpectralNormDims d = SpectralNormShape(*this);
    EnforceInputShape(3, w.shape());
    auto* scalars = static_cast<float*>(context_->Scratch(2 * sizeof(float)));
    const float* u = Input(1).data<float>();
    const float* v = Input(2).data<float>();
    cuda::LaunchSpectralSigma(w.data<float>(), Input(3).data<float>(), d.rows, d.cols, u, v,
                              scalars, context_->stream());
    cuda::CheckLaunch(def(), "SigmaKernel");
    Tensor* dw = Output(0);
    dw->Resize(w.shape());
    cuda::LaunchSpectralGradient(Input(3).data<float>(), d.rows, d.cols, u, v, scalars,
                                 dw->mutable_data<float>(), context_->stream());
    cuda::CheckLaunch(def(), "GradientKernel");
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(SpectralNorm, SpectralNormCudaOp);
REGISTER_CUDA_OPERATOR(SpectralNormGradient, SpectralNormGradientCudaOp);

}  // namespace crossbow
