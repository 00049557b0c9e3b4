#include "crossbow/engine/sync/ssgd.h"

#include "crossbow/engine/flat_ops.h"
#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {
namespace {

// S-SGD: gradients weighted by batch size, averaged over every learner's images (one batch of
// sum_j n_j); every learner takes the same step and stays the one model.
class SSGD : public Synchroniser {
 public:
  void Learner(const LearnerTurn& turn) const override;
  void Device(const DeviceTurn& turn) const override;
  bool LearnersAreTheModel() const override { return true; }
};

void SSGD::Learner(const LearnerTurn& t) const {
  float* c = t.contribution;
  const float weight = t.skip ? 0.f : static_cast<float>(t.images);
  // A skipped step's gradients may be NaN, and 0 * NaN is NaN: it gathers 0 x its (finite,
  // same-layout) parameters instead, so that it adds nothing to the sum.
  t.sync.Gather(t.context, t.skip ? t.params : t.gradients, weight, c);
  t.sync.SetValue(t.context, c + t.layout.count_offset(), weight);
  t.contribute();
  t.wait_for_sync();
  t.sync.WaitForAverage(t.context);
  t.sync.Scatter(t.context, t.sum, t.gradients);
  t.learner.Update();
  t.sync.Scatter(t.context, t.z, t.state);
}

void SSGD::Device(const DeviceTurn& t) const {
  t.Run(DivideByCount{t.sum + t.layout.count_offset(), t.sum, t.layout.param_floats()});
}

void DivideByCountOnCpu(const DivideByCount& a, ContextBase*) {
  flat::Scale(*a.count > 0 ? 1.f / *a.count : 0.f, a.x, a.n);
}

const bool registered = SyncKernel<DivideByCount>::Register(DeviceType::kCPU, &DivideByCountOnCpu);

}  // namespace

CROSSBOW_REGISTER_SYNCHRONISER(ssgd, [](const EngineOptions&) { return std::make_unique<SSGD>(); });

}  // namespace crossbow
