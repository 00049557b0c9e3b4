#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

namespace crossbow::flat::cuda {

// The flat-buffer kernels of the CUDA sync backend on a GPU (flat_ops.cu): each call is one
// launch on `stream` (none when there is nothing to do). The synchronisers' own are in
// sync/*.cu, launched as flat_ops_cuda.cuh says.
//
// Kernels over a learner's blobs read a table in device memory: the blobs' segments, then
// chunks of at most kChunk elements of one segment each, one thread block per chunk, so that
// one launch covers every blob with balanced blocks.
constexpr int64_t kChunk = 4096;
constexpr int kChunkSegmentShift = 40;  // a chunk is segment << 40 | its first element

struct TableSegment {  // blob[i] <-> flat[offset + i]
  float* data;
  int64_t offset;
  int64_t numel;
};
struct DeviceTable {
  const TableSegment* segments = nullptr;
  const int64_t* chunks = nullptr;
  int64_t num_chunks = 0;
};

// flat[e] = scale * blob[e]
void Gather(const DeviceTable& blobs, float scale, float* flat, cudaStream_t stream);
// blob[e] = flat[e]
void Scatter(const DeviceTable& blobs, const float* flat, cudaStream_t stream);
void SetValue(float* x, float value, cudaStream_t stream);
// *flag = 1 where a blob element is NaN or infinite (*flag is not cleared).
void FlagNonFinite(const DeviceTable& blobs, int* flag, cudaStream_t stream);

// sum = parts[0] + parts[1] + ... in that order.
void Sum(const std::vector<const float*>& parts, float* sum, int64_t n, cudaStream_t stream);
// y = scale * x
void ScaleInto(float scale, const float* x, float* y, int64_t n, cudaStream_t stream);

}  // namespace crossbow::flat::cuda
