#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "operators/cuda_launch.cuh"
#include "operators/half_precision_cuda.h"

namespace crossbow::cuda {
namespace {

__device__ float ScaleAt(const float* scale) { return scale == nullptr ? 1.f : *scale; }

template <typename Half>
__device__ Half FromFloat(float v);
template <>
__device__ __nv_bfloat16 FromFloat(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __half FromFloat(float v) {
  return __float2half_rn(v);
}

template <typename Half>
__global__ void ToHalfKernel(const float* src, Half* dst, int64_t n, const float* scale) {
  const float s = ScaleAt(scale);
  CUDA_KERNEL_LOOP(i, n) { dst[i] = FromFloat<Half>(src[i] * s); }
}

template <typename Half>
__global__ void FromHalfKernel(const Half* src, float* dst, int64_t n, const float* scale) {
  const float s = ScaleAt(scale);
  CUDA_KERNEL_LOOP(i, n) { dst[i] = static_cast<float>(src[i]) / s; }
}

// The bits of a non-negative float order as the float does (and NaN's above infinity's), so
// the largest magnitude is an unsigned atomicMax of the bits.
__global__ void MaxMagnitudeBitsKernel(const float* src, int64_t n, unsigned* bits) {
  unsigned local = 0;
  CUDA_KERNEL_LOOP(i, n) { local = max(local, __float_as_uint(fabsf(src[i]))); }
  for (int offset = warpSize / 2; offset > 0; offset /= 2) {
    local = max(local, __shfl_down_sync(0xffffffffu, local, offset));
  }
  if ((threadIdx.x & (warpSize - 1)) == 0) atomicMax(bits, local);
}

// The exponent is clamped to +-64, beyond which no gradient of a net lies: 2^-e itself must
// stay a finite, normal float (a largest value of 1e-40 would otherwise give 2^133 = inf).
__global__ void ScaleFromBitsKernel(const unsigned* bits, float* scale) {
  const float largest = __uint_as_float(*bits);
  int exponent = 0;
  frexpf(largest, &exponent);
  exponent = min(max(exponent, -64), 64);
  *scale = largest > 0.f && isfinite(largest) ? ldexpf(1.f, -exponent) : 1.f;
}

}  // namespace

void LaunchToHalf(const float* src, void* dst, int64_t n, HalfType type, const float* scale,
                  cudaStream_t stream) {
  if (type == HalfType::kBF16) {
    ToHalfKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
        src, static_cast<__nv_bfloat16*>(dst), n, scale);
  } else {
    ToHalfKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(src, static_cast<__half*>(dst), n,
                                                                scale);
  }
}

void LaunchFromHalf(const void* src, float* dst, int64_t n, HalfType type, const float* scale,
                    cudaStream_t stream) {
  if (type == HalfType::kBF16) {
    FromHalfKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(src), dst, n, scale);
  } else {
    FromHalfKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(static_cast<const __half*>(src),
                                                                  dst, n, scale);
  }
}

void LaunchPowerOfTwoScale(const float* src, int64_t n, float* scale, unsigned* bits,
                           cudaStream_t stream) {
  cudaMemsetAsync(bits, 0, sizeof(unsigned), stream);
  MaxMagnitudeBitsKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(src, n, bits);
  ScaleFromBitsKernel<<<1, 1, 0, stream>>>(bits, scale);
}

}  // namespace crossbow::cuda
