#include "crossbow/comm/rendezvous.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "crossbow/core/enforce.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

using std::chrono::milliseconds;

// Three ranks, many rounds: the last to arrive sums the posted values for everyone, and no
// rank starts a round before every rank has taken the previous result.
TEST(Rendezvous, TheLastRankActsForAllOncePerRound) {
  const int ranks = 3, rounds = 200;
  Rendezvous group(ranks);
  std::vector<int> posted(ranks), taken(ranks * rounds);
  int sum = 0, firsts = 0;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      for (int i = 0; i < rounds; ++i) {
        group.Run(
            r, milliseconds(10000),
            [&](bool first) {
              firsts += first;
              posted[r] = r + i;
            },
            [&] { sum = posted[0] + posted[1] + posted[2]; }, [&] { taken[i * ranks + r] = sum; });
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(firsts, rounds);
  for (int i = 0; i < rounds; ++i) {
    for (int r = 0; r < ranks; ++r) ASSERT_EQ(taken[i * ranks + r], 3 + 3 * i) << i;
  }
}

TEST(Rendezvous, AMissingRankTimesOutAndAnAbortReachesEveryone) {
  Rendezvous group(2);
  auto nothing = [] {};
  try {
    group.Run(
        0, milliseconds(50), [](bool) {}, nothing, nothing);
    FAIL() << "rank 1 never came";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 timed out"), std::string::npos) << e.what();
  }
  EXPECT_ERROR(group.Run(
                   1, milliseconds(50), [](bool) {}, nothing, nothing),
               Error, "rank 0 timed out waiting for the other ranks");
  Rendezvous other(2);
  std::thread waiter([&] {
    EXPECT_ERROR(other.Run(
                     0, milliseconds(10000), [](bool) {}, nothing, nothing),
                 Error, "all-reduce on rank 0 aborted: learner 3 failed");
  });
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_TRUE(other.Abort("learner 3 failed"));
  waiter.join();
  EXPECT_EQ(other.aborted(), "learner 3 failed");
}

}  // namespace
}  // namespace crossbow
