#include "crossbow/engine/sync/sync_defaults.h"

#include <gtest/gtest.h>

namespace crossbow {
namespace {

TEST(SyncDefaults, PeriodsArePerSynchroniserAndAlphaFollowsTheLearners) {
  EngineOptions o;
  const std::pair<const char*, int> periods[] = {
      {"sma", 1}, {"easgd", 1}, {"localsgd", 4}, {"diloco", 64}, {"ssgd", 1}};
  for (const auto& [sync, period] : periods) {
    o.sync = sync;
    EXPECT_EQ(WithSyncDefaults(o, 2).sync_period, period) << sync;
  }
  EXPECT_EQ(WithSyncDefaults(o, 1).alpha, 0.1);
  EXPECT_EQ(WithSyncDefaults(o, 2).alpha, 0.5);
  EXPECT_DOUBLE_EQ(WithSyncDefaults(o, 4).alpha, 0.25);
  EXPECT_DOUBLE_EQ(WithSyncDefaults(o, 64).alpha, 1.0 / 64);
  o.alpha = 0.3;
  o.sync_period = 5;
  EXPECT_EQ(WithSyncDefaults(o, 64).alpha, 0.3);  // given: kept
  EXPECT_EQ(WithSyncDefaults(o, 64).sync_period, 5);
}

}  // namespace
}  // namespace crossbow
