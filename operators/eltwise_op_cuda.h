#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// The element-wise activations that eltwise_op.cu computes.
enum class Eltwise { kRelu, kMish, kSigmoid };

// y = f(x) over n floats; y may be x. Relu passes a NaN (to the loss, rather than hiding it).
void LaunchEltwise(Eltwise f, const float* x, int64_t n, float* y, cudaStream_t stream);
// dx = f'(.) dy over n floats, from f's input x (Mish) or output y (Relu, Sigmoid); dx may
// be dy.
void LaunchEltwiseGradient(Eltwise f, const float* from, const float* dy, int64_t n, float* dx,
                           cudaStream_t stream);

}  // namespace crossbow::cuda
