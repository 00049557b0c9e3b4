#pragma once

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {

// Local SGD (PyTorch's PeriodicModelAverager): learners step alone, and every `period`
// iterations z = mean_j w_j and every learner takes z's parameters and statistics (keeping its
// momentum).
class LocalSGD : public Synchroniser {
 public:
  explicit LocalSGD(int period) : period_(period) {}
  bool SynchronisesAt(int64_t t) const override { return EveryPeriod(t, period_); }
  void Learner(const LearnerTurn& turn) const override;
  void Device(const DeviceTurn& turn) const override;

 private:
  int period_;
};

}  // namespace crossbow
