#include "crossbow/core/cuda_stream.h"
#include "crossbow/engine/flat_ops_cuda.cuh"
#include "crossbow/engine/sync/momentum_step.h"

namespace crossbow {
namespace {

__global__ void StepKernel(const float* x, float scale, float shift, float lr, float mu,
                           bool nesterov, float* z, float* u, int64_t n) {
  CROSSBOW_GRID_STRIDE(i, n) {
    const float d = scale * x[i] - shift * z[i];
    const float v = mu * u[i] + d;
    u[i] = v;
    z[i] += lr * (nesterov ? d + mu * v : v);
  }
}

void StepOnGpu(const MomentumStep& s, ContextBase* sync) {
  if (s.n == 0) return;
  StepKernel<<<flat::cuda::Blocks(s.n), flat::cuda::kThreads, 0, cuda::StreamOf(sync)>>>(
      s.x, s.scale, s.shift, s.lr, s.mu, s.nesterov, s.z, s.u, s.n);
  flat::cuda::CheckLaunch(MomentumStep::kName, s.n);
}

const bool registered = SyncKernel<MomentumStep>::Register(DeviceType::kCUDA, &StepOnGpu);

}  // namespace
}  // namespace crossbow
