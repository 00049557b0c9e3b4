#include "crossbow/core/context.h"
#include "crossbow/core/cuda_stream.h"
#include "crossbow/engine/flat_ops_cuda.cuh"
#include "crossbow/engine/sync/ssgd.h"
#include "crossbow/engine/sync/sync_kernel.h"

namespace crossbow {
namespace {

__global__ void DivideByCountKernel(const float* count, float* x, int64_t n) {
  const float c = *count;
  const float scale = c > 0 ? 1.f / c : 0.f;
  CROSSBOW_GRID_STRIDE(i, n) { x[i] *= scale; }
}

void DivideByCountOnGpu(const DivideByCount& a, ContextBase* sync) {
  if (a.n == 0) return;
  DivideByCountKernel<<<flat::cuda::Blocks(a.n), flat::cuda::kThreads, 0, cuda::StreamOf(sync)>>>(
      a.count, a.x, a.n);
  flat::cuda::CheckLaunch(DivideByCount::kName, a.n);
}

const bool registered = SyncKernel<DivideByCount>::Register(DeviceType::kCUDA, &DivideByCountOnGpu);

}  // namespace
}  // namespace crossbow
