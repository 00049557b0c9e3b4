#include "crossbow/engine/sync/sma.h"

#include "crossbow/engine/engine.h"
#include "crossbow/engine/sync/momentum_step.h"

namespace crossbow {

SMA::SMA(double alpha, double central_momentum, const std::string& type, SyncPeriod period)
    : alpha_(static_cast<float>(alpha)),
      mu_(static_cast<float>(central_momentum)),
      nesterov_(type == "nesterov"),
      period_(period) {}

void SMA::Learner(const LearnerTurn& turn) const {
  // Before the step the learner's weights are still its snapshot s_j.
  turn.Run(SmaCorrection{&turn.params, turn.z, alpha_, turn.contribution});
  turn.contribute();
  turn.Update();
  turn.Run(SmaApplyCorrection{turn.contribution, &turn.params});
}

void SMA::Device(const DeviceTurn& turn) const {
  const int64_t n = turn.layout.param_floats();
  if (nesterov_) {
    // u = mu_z u + sum c; z += sum c + mu_z u.
    MomentumStep step = MomentumStep::OnCentral(turn);
    step.mu = mu_;
    step.nesterov = true;
    turn.Run(step);
  } else {
    turn.Run(SmaPolyakUpdate{turn.sum, mu_, turn.z, turn.central, n});
  }
}

CROSSBOW_REGISTER_SYNCHRONISER(sma, [](const EngineOptions& o) {
  return std::make_unique<SMA>(o.alpha, o.central_momentum, o.central_momentum_type, PeriodOf(o));
});

namespace sma {

void Correction(const float* __restrict w, const float* __restrict z, float alpha,
                float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = alpha * (w[i] - z[i]);
}

void ApplyCorrection(const float* __restrict c, float* __restrict w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) w[i] -= c[i];
}

void PolyakUpdate(const float* __restrict sum_c, float mu, float* __restrict z,
                  float* __restrict z_prev, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float current = z[i];
    z[i] = current + sum_c[i] + mu * (current - z_prev[i]);
    z_prev[i] = current;
  }
}

}  // namespace sma

namespace {

// On the CPU one call per blob, on the calling thread.
void CorrectionOnCpu(const SmaCorrection& a, ContextBase*) {
  for (const Segment& s : a.w->segments()) {
    sma::Correction(s.data, a.z + s.offset, a.alpha, a.c + s.offset, s.numel);
  }
}
void ApplyCorrectionOnCpu(const SmaApplyCorrection& a, ContextBase*) {
  for (const Segment& s : a.w->segments()) sma::ApplyCorrection(a.c + s.offset, s.data, s.numel);
}
void PolyakUpdateOnCpu(const SmaPolyakUpdate& a, ContextBase*) {
  sma::PolyakUpdate(a.sum_c, a.mu, a.z, a.z_prev, a.n);
}

const bool registered =
    SyncKernel<SmaCorrection>::Register(DeviceType::kCPU, &CorrectionOnCpu) &&
    SyncKernel<SmaApplyCorrection>::Register(DeviceType::kCPU, &ApplyCorrectionOnCpu) &&
    SyncKernel<SmaPolyakUpdate>::Register(DeviceType::kCPU, &PolyakUpdateOnCpu);

}  // namespace
}  // namespace crossbow
