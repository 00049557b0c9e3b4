#pragma once

// How the flat-buffer kernels launch (flat_ops.cu, and the synchronisers' own in sync/*.cu):
// over a learner's blobs, one thread block per chunk of a segment table; over a flat buffer, a
// grid-stride loop.
#include <algorithm>
#include <cstdint>

#include "crossbow/core/check_cuda.h"
#include "crossbow/engine/flat_ops_cuda.h"

namespace crossbow::flat::cuda {

constexpr int kThreads = 256;

// One block per chunk of one segment: op(blob element, flat element).
template <typename Op>
__global__ void ChunkKernel(DeviceTable table, Op op) {
  const int64_t chunk = table.chunks[blockIdx.x];
  const TableSegment s = table.segments[chunk >> kChunkSegmentShift];
  const int64_t begin = chunk & ((int64_t{1} << kChunkSegmentShift) - 1);
  const int64_t end = begin + kChunk < s.numel ? begin + kChunk : s.numel;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) op(s.data[i], s.offset + i);
}

template <typename Op>
void LaunchChunks(const DeviceTable& table, Op op, cudaStream_t stream, const char* what) {
  if (table.num_chunks == 0) return;
  ChunkKernel<<<static_cast<unsigned>(table.num_chunks), kThreads, 0, stream>>>(table, op);
  CUDA_CHECK(cudaGetLastError(), "flat kernel ", what, " over ", table.num_chunks, " chunks");
}

// Blocks of a grid-stride launch over n floats.
inline unsigned Blocks(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 8192));
}

inline void CheckLaunch(const char* what, int64_t n) {
  CUDA_CHECK(cudaGetLastError(), "flat kernel ", what, " over ", n, " floats");
}

}  // namespace crossbow::flat::cuda

#define CROSSBOW_GRID_STRIDE(i, n)                                                       \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
