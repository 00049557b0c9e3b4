#pragma once

// Launch shapes for the element-wise kernels of the CUDA operators.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace crossbow::cuda {

constexpr int kThreadsPerBlock = 256;

// Enough blocks to cover n with one element a thread, capped: the grid-stride loop of
// CUDA_KERNEL_LOOP covers the rest.
inline int BlocksFor(int64_t n) {
  constexpr int64_t kMaxBlocks = 4096;
  return static_cast<int>(
      std::max<int64_t>(1, std::min(kMaxBlocks, (n + kThreadsPerBlock - 1) / kThreadsPerBlock)));
}

}  // namespace crossbow::cuda

#define CUDA_KERNEL_LOOP(i, n)                                                          \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
