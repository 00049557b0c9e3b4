#pragma once

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {

// S-SGD: gradients weighted by batch size, averaged over every learner's images (one batch of
// sum_j n_j); every learner takes the same step and stays the one model.
class SSGD : public Synchroniser {
 public:
  void Learner(const LearnerTurn& turn) const override;
  void Device(const DeviceTurn& turn) const override;
  bool LearnersAreTheModel() const override { return true; }
};

}  // namespace crossbow
