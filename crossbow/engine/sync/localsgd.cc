#include "crossbow/engine/sync/localsgd.h"

#include "crossbow/engine/engine.h"

namespace crossbow {

void LocalSGD::Learner(const LearnerTurn& t) const {
  t.Update();
  t.sync.Gather(t.context, t.params, 1.f, t.contribution);
  t.contribute();
  t.wait_for_sync();
  t.sync.WaitForAverage(t.context);
  t.sync.Scatter(t.context, t.z, t.params);
  t.sync.Scatter(t.context, t.z, t.state);
}

void LocalSGD::Device(const DeviceTurn& t) const {
  const int64_t n = t.layout.param_floats();
  t.sync.ScaleInto(1.f, t.z, t.central, n);
  t.sync.ScaleInto(1.f / static_cast<float>(t.learners), t.sum, t.z, n);
}

CROSSBOW_REGISTER_SYNCHRONISER(localsgd, [](const EngineOptions& o) {
  return std::make_unique<LocalSGD>(o.sync_period);
});

}  // namespace crossbow
