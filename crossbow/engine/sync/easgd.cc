// EASGD (Zhang, Choromanska and LeCun 2015, synchronous form, eqs. 5-6): every `period`
// iterations x_j -= a (x_j - z) beside the learner's own step from x_j, and
// z += a sum_j (x_j - z), with the moving rate a = alpha: SMA's update without central momentum.
#include "crossbow/engine/engine.h"
#include "crossbow/engine/sync/sma.h"

namespace crossbow {

CROSSBOW_REGISTER_SYNCHRONISER(easgd, [](const EngineOptions& o) {
  return std::make_unique<SMA>(o.alpha, 0.0, "polyak", PeriodOf(o));
});

}  // namespace crossbow
