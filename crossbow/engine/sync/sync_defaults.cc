#include "crossbow/engine/sync/sync_defaults.h"

namespace crossbow {

// The best H of each in the comparison of docs/history/results-0.1.0.md
// ("The six synchronisers side by side").
// DiLoCo's outer step multiplies the step towards the average by about 7 and needs long
// periods: at H = 4 it was unstable, at H = 1 it diverges.
const std::map<std::string, int>& SyncPeriodDefaults() {
  static const std::map<std::string, int> periods = {
      {"sma", 1}, {"easgd", 1}, {"localsgd", 4}, {"diloco", 64}};
  return periods;
}

// The N corrections of an iteration move z by N alpha (mean s - z): 1/N moves it to the
// learners' mean (64 learners at 0.1 diverged; 4 at 0.1 lost 2 points against 1/4, 2 at 0.5
// matched 0.1: docs/history/results-0.1.0.md, "Why averaging cost epochs"). One learner
// pulled halfway onto z, which trails it, lost 8 points on LeNet (tests/python/test_trainer.py's
// bf16 run), so it keeps the 0.1 every run used before.
double AutoAlpha(int learners) { return learners <= 1 ? kOneLearnerAlpha : 1.0 / learners; }

EngineOptions WithSyncDefaults(EngineOptions options, int learners) {
  if (options.sync_period == 0) {
    const auto it = SyncPeriodDefaults().find(options.sync);
    options.sync_period = it == SyncPeriodDefaults().end() ? 1 : it->second;  // ssgd, sgd
  }
  if (options.alpha == 0) options.alpha = AutoAlpha(learners);
  return options;
}

}  // namespace crossbow
