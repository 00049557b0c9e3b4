#include "crossbow/engine/sync/sma.h"

#include "crossbow/engine/engine.h"

namespace crossbow {

SMA::SMA(const std::string& name, double alpha, double central_momentum, const std::string& type,
         int period)
    : alpha_(static_cast<float>(alpha)),
      mu_(static_cast<float>(central_momentum)),
      nesterov_(type == "nesterov"),
      period_(period) {
  CROSSBOW_ENFORCE_VALUE(alpha > 0 && alpha <= 1, name, "'s alpha must be in (0, 1], got ", alpha);
  CROSSBOW_ENFORCE_VALUE(central_momentum >= 0 && central_momentum < 1, name,
                         "'s central momentum must be in [0, 1), got ", central_momentum);
  CROSSBOW_ENFORCE_VALUE(type == "polyak" || type == "nesterov",
                         "central_momentum_type must be polyak or nesterov, got '", type, "'");
}

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
  return std::make_unique<SMA>("SMA", o.alpha, o.central_momentum, o.central_momentum_type,
                               o.sync_period);
});

}  // namespace crossbow
