#include "operators/cuda_launch.cuh"
#include "operators/eltwise_op_cuda.h"

namespace crossbow::cuda {
namespace {

// `x < 0 ? 0 : x` rather than fmaxf, so that a NaN reaches the loss instead of vanishing here;
// backward from the output y.
struct Relu {
  __device__ static float Forward(float x) { return x < 0.f ? 0.f : x; }
  __device__ static float Backward(float y, float dy) { return y > 0.f ? dy : 0.f; }
};

// softplus(x) = log(1 + e^x), taken as x beyond 20 (where they agree in float), as PyTorch.
__device__ float Softplus(float x) { return x > 20.f ? x : log1pf(expf(x)); }

struct Mish {
  __device__ static float Forward(float x) { return x * tanhf(Softplus(x)); }
  __device__ static float Backward(float x, float dy) {
    const float t = tanhf(Softplus(x));
    const float sigmoid = 1.f / (1.f + expf(-x));
    return dy * (t + x * sigmoid * (1.f - t * t));
  }
};

// Backward from the output y: dy y (1 - y).
struct Sigmoid {
  __device__ static float Forward(float x) { return 1.f / (1.f + expf(-x)); }
  __device__ static float Backward(float y, float dy) { return dy * y * (1.f - y); }
};

template <typename F>
__global__ void ForwardKernel(const float* x, int64_t n, float* y) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = F::Forward(x[i]); }
}

template <typename F>
__global__ void BackwardKernel(const float* from, const float* dy, int64_t n, float* dx) {
  CUDA_KERNEL_LOOP(i, n) { dx[i] = F::Backward(from[i], dy[i]); }
}

template <typename F>
void Forward(const float* x, int64_t n, float* y, cudaStream_t stream) {
  ForwardKernel<F><<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(x, n, y);
}

template <typename F>
void Backward(const float* from, const float* dy, int64_t n, float* dx, cudaStream_t stream) {
  BackwardKernel<F><<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(from, dy, n, dx);
}

}  // namespace

void LaunchEltwise(Eltwise f, const float* x, int64_t n, float* y, cudaStream_t stream) {
  switch (f) {
    case Eltwise::kRelu:
      return Forward<Relu>(x, n, y, stream);
    case Eltwise::kMish:
      return Forward<Mish>(x, n, y, stream);
    case Eltwise::kSigmoid:
      return Forward<Sigmoid>(x, n, y, stream);
  }
}

void LaunchEltwiseGradient(Eltwise f, const float* from, const float* dy, int64_t n, float* dx,
                           cudaStream_t stream) {
  switch (f) {
    case Eltwise::kRelu:
      return Backward<Relu>(from, dy, n, dx, stream);
    case Eltwise::kMish:
      return Backward<Mish>(from, dy, n, dx, stream);
    case Eltwise::kSigmoid:
      return Backward<Sigmoid>(from, dy, n, dx, stream);
  }
}

}  // namespace crossbow::cuda
