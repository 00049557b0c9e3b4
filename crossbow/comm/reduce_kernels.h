#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace crossbow::comm::cuda {

constexpr int kMaxSumBuffers = 32;

// Every buffer (all on one GPU) becomes buffers[0] + buffers[1] + ..., summed in that order:
// one launch on `stream`.
void SumInPlace(const std::vector<float*>& buffers, int64_t n, cudaStream_t stream);

}  // namespace crossbow::comm::cuda
