// Relu and ReluGradient on CUDA: one element-wise kernel each, safe in place.
#include "crossbow/core/context_cuda.h"
#include "operators/cuda_launch.cuh"
#include "operators/cudnn_utils_cuda.h"

namespace crossbow {
namespace {

// `v < 0 ? 0 : v` rather than fmaxf, so that a NaN reaches the loss instead of vanishing here.
__global__ void ReluKernel(const float* x, int64_t n, float* y) {
  CUDA_KERNEL_LOOP(i, n) {
    const float v = x[i];
    y[i] = v < 0.f ? 0.f : v;
  }
}

__global__ void ReluGradientKernel(const float* y, const float* dy, int64_t n, float* dx) {
  CUDA_KERNEL_LOOP(i, n) { dx[i] = y[i] > 0.f ? dy[i] : 0.f; }
}

class ReluCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& x = Input(0);
    Tensor* y = Output(0);
    y->Resize(x.shape());
    const int64_t n = x.numel();
    ReluKernel<<<cuda::BlocksFor(n), cuda::kThreadsPerBlock, 0, context_->stream()>>>(
        x.data<float>(), n, y->mutable_data<float>());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }
};

// dX = dY where Y > 0, else 0 (from Relu's output, so that Relu may run in place).
class ReluGradientCudaOp final : public Operator<CUDAContext> {
 public:
  using Operator::Operator;

  void Run() override {
    const Tensor& y = Input(0);
    EnforceInputShape(1, y.shape());
    Tensor* dx = Output(0);
    dx->Resize(y.shape());
    const int64_t n = y.numel();
    ReluGradientKernel<<<cuda::BlocksFor(n), cuda::kThreadsPerBlock, 0, context_->stream()>>>(
        y.data<float>(), Input(1).data<float>(), n, dx->mutable_data<float>());
    CUDA_CHECK(cudaGetLastError(), cudnn::Describe(*this));
  }
};

}  // namespace

REGISTER_CUDA_OPERATOR(Relu, ReluCudaOp);
REGISTER_CUDA_OPERATOR(ReluGradient, ReluGradientCudaOp);

}  // namespace crossbow
