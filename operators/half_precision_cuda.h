#pragma once

// The half-precision copies that cuDNN convolutions compute on in precision bf16 and fp16:
// operators exchange fp32 tensors, and a convolution converts its inputs on the way in and
// its results on the way out (crossbow/core/precision.h).
#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

enum class HalfType { kBF16, kFP16 };

// dst[i] = src[i] * *scale rounded to `type` (to nearest even); scale is read on the device,
// nullptr reads as 1.
void LaunchToHalf(const float* src, void* dst, int64_t n, HalfType type, const float* scale,
                  cudaStream_t stream);
// dst[i] = src[i] / *scale in fp32; nullptr reads as 1.
void LaunchFromHalf(const void* src, float* dst, int64_t n, HalfType type, const float* scale,
                    cudaStream_t stream);
// *scale = 2^-e where the largest |src[i]| is m 2^e with m in [0.5, 1) (e clamped to +-64),
// so that the scaled values fit fp16's range with their relative precision kept; 1 where every
// value is 0 or one is not finite (the NaN or infinity then reaches the results unscaled).
// Computed on the device in three launches (nothing waits for the host, so a CUDA graph can
// hold them); `bits` is one unsigned int of device scratch.
void LaunchPowerOfTwoScale(const float* src, int64_t n, float* scale, unsigned* bits,
                           cudaStream_t stream);

}  // namespace crossbow::cuda
