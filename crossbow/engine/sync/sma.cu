#include "crossbow/core/cuda_stream.h"
#include "crossbow/engine/flat_ops_cuda.cuh"
#include "crossbow/engine/sync/sma.h"
#include "crossbow/engine/sync_backend_cuda.h"

namespace crossbow {
namespace {

using flat::cuda::Blocks;
using flat::cuda::kThreads;

struct CorrectionOp {
  const float* z;
  float alpha;
  float* c;
  __device__ void operator()(float& w, int64_t j) const { c[j] = alpha * (w - z[j]); }
};
struct ApplyCorrectionOp {
  const float* c;
  __device__ void operator()(float& w, int64_t j) const { w -= c[j]; }
};

__global__ void PolyakUpdateKernel(const float* sum_c, float mu, float* z, float* z_prev,
                                   int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) {
    const float current = z[i];
    z[i] = current + sum_c[i] + mu * (current - z_prev[i]);
    z_prev[i] = current;
  }
}

void CorrectionOnGpu(const SmaCorrection& a, ContextBase* learner) {
  flat::cuda::LaunchChunks(DeviceTableOf(*a.w, learner), CorrectionOp{a.z, a.alpha, a.c},
                           cuda::StreamOf(learner), SmaCorrection::kName);
}

void ApplyCorrectionOnGpu(const SmaApplyCorrection& a, ContextBase* learner) {
  flat::cuda::LaunchChunks(DeviceTableOf(*a.w, learner), ApplyCorrectionOp{a.c},
                           cuda::StreamOf(learner), SmaApplyCorrection::kName);
}

void PolyakUpdateOnGpu(const SmaPolyakUpdate& a, ContextBase* sync) {
  if (a.n == 0) return;
  PolyakUpdateKernel<<<Blocks(a.n), kThreads, 0, cuda::StreamOf(sync)>>>(a.sum_c, a.mu, a.z,
                                                                         a.z_prev, a.n);
  flat::cuda::CheckLaunch(SmaPolyakUpdate::kName, a.n);
}

const bool registered =
    SyncKernel<SmaCorrection>::Register(DeviceType::kCUDA, &CorrectionOnGpu) &&
    SyncKernel<SmaApplyCorrection>::Register(DeviceType::kCUDA, &ApplyCorrectionOnGpu) &&
    SyncKernel<SmaPolyakUpdate>::Register(DeviceType::kCUDA, &PolyakUpdateOnGpu);

}  // namespace
}  // namespace crossbow
