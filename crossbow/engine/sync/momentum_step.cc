#include "crossbow/engine/sync/momentum_step.h"

namespace crossbow {
namespace {

// Branch-free over restrict pointers, so that it vectorises.
void Step(const float* __restrict x, float scale, float shift, float lr, float mu, bool nesterov,
          float* __restrict z, float* __restrict u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float d = scale * x[i] - shift * z[i];
    const float v = mu * u[i] + d;
    u[i] = v;
    z[i] += lr * (nesterov ? d + mu * v : v);
  }
}

void StepOnCpu(const MomentumStep& s, ContextBase*) {
  Step(s.x, s.scale, s.shift, s.lr, s.mu, s.nesterov, s.z, s.u, s.n);
}

const bool registered = SyncKernel<MomentumStep>::Register(DeviceType::kCPU, &StepOnCpu);

}  // namespace

MomentumStep MomentumStep::OnCentral(const DeviceTurn& turn) {
  MomentumStep step;
  step.x = turn.sum;
  step.z = turn.z;
  step.u = turn.central;
  step.n = turn.layout.param_floats();
  return step;
}

}  // namespace crossbow
