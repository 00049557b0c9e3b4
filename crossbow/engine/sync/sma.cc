#include "crossbow/engine/sync/sma.h"

#include "crossbow/engine/engine.h"

namespace crossbow {

SMA::SMA(double alpha, double central_momentum, const std::string& type, SyncPeriod period)
    : alpha_(static_cast<float>(alpha)),
      mu_(static_cast<float>(central_momentum)),
      nesterov_(type == "nesterov"),
      period_(period) {}

void SMA::Learner(const LearnerTurn& turn) const {
  // Before the step the learner's weights are still its snapshot s_j.
  turn.sync.Correction(turn.context, turn.params, turn.z, alpha_, turn.contribution);
  turn.contribute();
  turn.Update();
  turn.sync.Subtract(turn.context, turn.contribution, turn.params);
}

void SMA::Device(const DeviceTurn& turn) const {
  const int64_t n = turn.layout.param_floats();
  if (nesterov_) {
    turn.sync.MomentumStep(turn.sum, 1.f, 0.f, 1.f, mu_, true, turn.z, turn.central, n);
  } else {
    turn.sync.UpdateAverage(turn.sum, mu_, turn.z, turn.central, n);
  }
}

CROSSBOW_REGISTER_SYNCHRONISER(sma, [](const EngineOptions& o) {
  return std::make_unique<SMA>(o.alpha, o.central_momentum, o.central_momentum_type, PeriodOf(o));
});

}  // namespace crossbow
