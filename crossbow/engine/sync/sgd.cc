// Plain SGD: one learner whose own update is bit-equal to Learner::Step; its device only
// publishes its batch-norm statistics into z.
#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {
namespace {

class SGD : public Synchroniser {
 public:
  void Check(int devices, int k, int ranks) const override {
    CROSSBOW_ENFORCE_VALUE(k == 1 && devices == 1 && ranks == 1,
                           "sync 'sgd' trains one learner; got ",
                           ranks > 1 ? detail::Concat(ranks, " ranks x ") : "", devices,
                           " devices x ", k, " learners (use 'ssgd' or 'sma' for more)");
  }
  void Learner(const LearnerTurn& turn) const override {
    turn.contribute();
    turn.Update();
  }
  void Device(const DeviceTurn&) const override {}
  bool LearnersAreTheModel() const override { return true; }
};

}  // namespace

CROSSBOW_REGISTER_SYNCHRONISER(sgd, [](const EngineOptions&) { return std::make_unique<SGD>(); });

}  // namespace crossbow
