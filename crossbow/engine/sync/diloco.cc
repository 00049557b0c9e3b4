// DiLoCo (Douillard et al. 2023): learners step alone (the inner optimiser); every `period`
// iterations the pseudo-gradient delta = z - mean_j w_j drives an outer SGD with Nesterov
// momentum on z, and every learner restarts from z (keeping its own momentum, as DiLoCo keeps
// its inner optimiser's state). With velocity u = -m of the paper's momentum m:
//   u = mu_o u - delta;  z += lr_o (mu_o u - delta).
#include "crossbow/engine/engine.h"
#include "crossbow/engine/sync/localsgd.h"
#include "crossbow/engine/sync/momentum_step.h"

namespace crossbow {
namespace {

class DiLoCo : public LocalSGD {
 public:
  DiLoCo(SyncPeriod period, double lr, double momentum)
      : LocalSGD(period), lr_(static_cast<float>(lr)), mu_(static_cast<float>(momentum)) {}
  void Device(const DeviceTurn& t) const override {
    // -delta = mean_j w_j - z = sum / N - z.
    MomentumStep step = MomentumStep::OnCentral(t);
    step.scale = 1.f / static_cast<float>(t.learners);
    step.shift = 1.f;
    step.lr = lr_;
    step.mu = mu_;
    step.nesterov = true;
    t.Run(step);
  }
  std::string central_name() const override { return "z_velocity"; }
  bool central_starts_at_z() const override { return false; }

 private:
  float lr_, mu_;
};

}  // namespace

CROSSBOW_REGISTER_SYNCHRONISER(diloco, [](const EngineOptions& o) {
  return std::make_unique<DiLoCo>(PeriodOf(o), o.outer_lr, o.outer_momentum);
});

}  // namespace crossbow
