#pragma once

#include <string>

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {

// SMA (DESIGN.md, "Engine"): c_j = alpha (s_j - z) against the snapshot s_j taken before the
// learner's step, w_j -= c_j, and z moves by sum_j c_j with Polyak or Nesterov momentum mu_z,
// every `period` iterations. EASGD is the same update without central momentum (easgd.cc).
class SMA : public Synchroniser {
 public:
  // `type`: polyak or nesterov (the option table checks the values).
  SMA(double alpha, double central_momentum, const std::string& type, SyncPeriod period);
  bool SynchronisesAt(int64_t t) const override { return period_.At(t); }
  void Learner(const LearnerTurn& turn) const override;
  void Device(const DeviceTurn& turn) const override;
  bool RestartsOnDrop() const override { return true; }
  // Polyak momentum reads z - z_prev; Nesterov keeps its velocity u instead.
  std::string central_name() const override { return nesterov_ ? "z_velocity" : "z_prev"; }
  bool central_starts_at_z() const override { return !nesterov_; }

 private:
  float alpha_, mu_;
  bool nesterov_;
  SyncPeriod period_;
};

}  // namespace crossbow
