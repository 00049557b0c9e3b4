#include <algorithm>

#include "crossbow/engine/flat_ops_cuda.cuh"

namespace crossbow::flat::cuda {
namespace {

constexpr int kMaxParts = 32;  // contributions summed per launch

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

__global__ void ScaleIntoKernel(float scale, const float* x, float* y, int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) { y[i] = x[i] * scale; }
}

__global__ void SetValueKernel(float* x, float value) { *x = value; }

}  // namespace

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
  CheckLaunch("SetValue", 1);
}

void Sum(const std::vector<const float*>& parts, float* sum, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  size_t first = 0;
  do {  // once even without parts: the sum is then 0
    Parts batch{};
    batch.count = static_cast<int>(std::min<size_t>(parts.size() - first, kMaxParts));
    std::copy_n(parts.begin() + first, batch.count, batch.p);
    SumKernel<<<Blocks(n), kThreads, 0, stream>>>(batch, first > 0, sum, n);
    CheckLaunch("Sum", n);
    first += batch.count;
  } while (first < parts.size());
}

void ScaleInto(float scale, const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  ScaleIntoKernel<<<Blocks(n), kThreads, 0, stream>>>(scale, x, y, n);
  CheckLaunch("ScaleInto", n);
}

}  // namespace crossbow::flat::cuda
