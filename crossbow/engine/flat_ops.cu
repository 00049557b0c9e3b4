#include <algorithm>

#include "crossbow/core/check_cuda.h"
#include "crossbow/engine/flat_ops_cuda.h"

namespace crossbow::flat::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxParts = 32;  // contributions summed per launch

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

struct CorrectionOp {
  const float* z;
  float alpha;
  float* c;
  __device__ void operator()(float& w, int64_t j) const { c[j] = alpha * (w - z[j]); }
};
struct SubtractOp {
  const float* c;
  __device__ void operator()(float& w, int64_t j) const { w -= c[j]; }
};
struct GatherOp {
  float scale;
  float* flat;
  __device__ void operator()(float& b, int64_t j) const { flat[j] = scale * b; }
};
struct ScatterOp {
  const float* flat;
  __device__ void operator()(float& b, int64_t j) const { b = flat[j]; }
};

struct FlagNonFiniteOp {
  int* flag;
  __device__ void operator()(float& b, int64_t) const {
    if (!isfinite(b)) *flag = 1;
  }
};

unsigned Blocks(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 8192));
}

#define CROSSBOW_GRID_STRIDE(i, n)                                                       \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

struct Parts {
  const float* p[kMaxParts];
  int count;
};

// sum = (accumulate ? sum : 0) + p[0] + p[1] + ..., left to right.
__global__ void SumKernel(Parts parts, bool accumulate, float* sum, int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) {
    float s = accumulate ? sum[i] : 0.f;
    for (int r = 0; r < parts.count; ++r) s += parts.p[r][i];
    sum[i] = s;
  }
}

__global__ void UpdateAverageKernel(const float* sum_c, float mu, float* z, float* z_prev,
                                    int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) {
    const float current = z[i];
    z[i] = current + sum_c[i] + mu * (current - z_prev[i]);
    z_prev[i] = current;
  }
}

__global__ void MomentumStepKernel(const float* x, float scale, float shift, float lr, float mu,
                                   bool nesterov, float* z, float* u, int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) {
    const float d = scale * x[i] - shift * z[i];
    const float v = mu * u[i] + d;
    u[i] = v;
    z[i] += lr * (nesterov ? d + mu * v : v);
  }
}

__global__ void ScaleIntoKernel(float scale, const float* x, float* y, int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) { y[i] = x[i] * scale; }
}

__global__ void ScaleByInverseKernel(const float* count, float* x, int64_t n) {
  const float c = *count;
  const float scale = c > 0 ? 1.f / c : 0.f;
  CROSSBOW_GRID_STRIDE(i, n) { x[i] *= scale; }
}

__global__ void SetValueKernel(float* x, float value) { *x = value; }

void Check(const char* what, int64_t n) {
  CUDA_CHECK(cudaGetLastError(), "flat kernel ", what, " over ", n, " floats");
}

}  // namespace

void Correction(const DeviceTable& w, const float* z, float alpha, float* c, cudaStream_t stream) {
  LaunchChunks(w, CorrectionOp{z, alpha, c}, stream, "Correction");
}

void Subtract(const DeviceTable& w, const float* c, cudaStream_t stream) {
  LaunchChunks(w, SubtractOp{c}, stream, "Subtract");
}

void Gather(const DeviceTable& blobs, float scale, float* flat, cudaStream_t stream) {
  LaunchChunks(blobs, GatherOp{scale, flat}, stream, "Gather");
}

void Scatter(const DeviceTable& blobs, const float* flat, cudaStream_t stream) {
  LaunchChunks(blobs, ScatterOp{flat}, stream, "Scatter");
}

void FlagNonFinite(const DeviceTable& blobs, int* flag, cudaStream_t stream) {
  LaunchChunks(blobs, FlagNonFiniteOp{flag}, stream, "FlagNonFinite");
}

void SetValue(float* x, float value, cudaStream_t stream) {
  SetValueKernel<<<1, 1, 0, stream>>>(x, value);
  Check("SetValue", 1);
}

void Sum(const std::vector<const float*>& parts, float* sum, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  size_t first = 0;
  do {  // once even without parts: the sum is then 0
    Parts batch{};
    batch.count = static_cast<int>(std::min<size_t>(parts.size() - first, kMaxParts));
    std::copy_n(parts.begin() + first, batch.count, batch.p);
    SumKernel<<<Blocks(n), kThreads, 0, stream>>>(batch, first > 0, sum, n);
    Check("Sum", n);
    first += batch.count;
  } while (first < parts.size());
}

void UpdateAverage(const float* sum_c, float mu, float* z, float* z_prev, int64_t n,
                   cudaStream_t stream) {
  if (n == 0) return;
  UpdateAverageKernel<<<Blocks(n), kThreads, 0, stream>>>(sum_c, mu, z, z_prev, n);
  Check("UpdateAverage", n);
}

void MomentumStep(const float* x, float scale, float shift, float lr, float mu, bool nesterov,
                  float* z, float* u, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  MomentumStepKernel<<<Blocks(n), kThreads, 0, stream>>>(x, scale, shift, lr, mu, nesterov, z, u,
                                                         n);
  Check("MomentumStep", n);
}

void ScaleInto(float scale, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  ScaleIntoKernel<<<Blocks(n), kThreads, 0, stream>>>(scale, x, y, n);
  Check("ScaleInto", n);
}

void ScaleByInverse(const float* count, float* x, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  ScaleByInverseKernel<<<Blocks(n), kThreads, 0, stream>>>(count, x, n);
  Check("ScaleByInverse", n);
}

}  // namespace crossbow::flat::cuda
