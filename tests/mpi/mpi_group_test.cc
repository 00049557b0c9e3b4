// Runs under mpirun (-np 2 and 3, registered in CMake): every rank runs every test.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "crossbow/comm/handshake.h"
#include "crossbow/comm/make_collectives.h"
#include "crossbow/comm/mpi.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

constexpr std::chrono::milliseconds kTimeout(20000);

MpiGroup& Group() {
  static MpiGroup group(MPI_COMM_WORLD);
  return group;
}

// Rank r's test values: awkward magnitudes, so that the order of the sum shows in the bits.
std::vector<float> Values(int rank, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) {
    v[i] = static_cast<float>((i % 7 + 1) * 0.1) * (rank % 2 ? 1e-3f : 1e3f) + 0.3f * rank;
  }
  return v;
}

std::vector<float> RankOrderSum(int ranks, size_t count) {
  std::vector<float> sum = Values(0, count);
  for (int r = 1; r < ranks; ++r) {
    const std::vector<float> v = Values(r, count);
    for (size_t i = 0; i < count; ++i) sum[i] += v[i];
  }
  return sum;
}

TEST(MpiGroup, AllReduceSumsInRankOrderBitForBitOnEveryRank) {
  MpiGroup& g = Group();
  for (size_t count : {size_t(0), size_t(1), size_t(2), size_t(5), size_t(1001)}) {
    std::vector<float> data = Values(g.rank(), count);
    g.AllReduceSum(g.rank(), data.data(), count, nullptr, kTimeout);
    const std::vector<float> expected = RankOrderSum(g.size(), count);
    ASSERT_EQ(0, std::memcmp(data.data(), expected.data(), count * sizeof(float)))
        << count << " floats";
  }
}

TEST(MpiGroup, AllGatherAndGatherKeepRankOrder) {
  MpiGroup& g = Group();
  const std::string mine(static_cast<size_t>(g.rank()) * 3, static_cast<char>('a' + g.rank()));
  const std::vector<std::string> all = g.AllGather(mine, kTimeout);
  ASSERT_EQ(all.size(), static_cast<size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) {
    EXPECT_EQ(all[r], std::string(static_cast<size_t>(r) * 3, static_cast<char>('a' + r)));
  }
  const std::vector<std::string> gathered = g.Gather(mine, g.size() - 1, kTimeout);
  EXPECT_EQ(gathered.empty(), g.rank() != g.size() - 1);
  if (!gathered.empty()) EXPECT_EQ(gathered, all);
  EXPECT_EQ(AllGatherDoubles(g, {g.rank() + 0.5}, kTimeout).back(), g.size() - 0.5);
}

TEST(MpiGroup, HierarchySumsDevicesInProcessThenRanksInOrder) {
  MpiGroup& g = Group();
  const auto local = MakeCollectives(
      {Device(), Device()}, std::shared_ptr<ProcessGroup>(&g, [](ProcessGroup*) {}), kTimeout);
  const size_t count = 37;
  std::vector<std::vector<float>> data = {Values(2 * g.rank(), count),
                                          Values(2 * g.rank() + 1, count)};
  std::thread other([&] { local->AllReduceSum(1, data[1].data(), count, nullptr, kTimeout); });
  local->AllReduceSum(0, data[0].data(), count, nullptr, kTimeout);
  other.join();
  std::vector<float> expected(count, 0.f);  // (d0 + d1) of rank 0, + (d2 + d3) of rank 1, ...
  for (int r = 0; r < g.size(); ++r) {
    const std::vector<float> a = Values(2 * r, count), b = Values(2 * r + 1, count);
    for (size_t i = 0; i < count; ++i) {
      const float server = a[i] + b[i];
      expected[i] = r == 0 ? server : expected[i] + server;
    }
  }
  EXPECT_EQ(0, std::memcmp(data[0].data(), expected.data(), count * sizeof(float)));
  EXPECT_EQ(data[0], data[1]);
}

TEST(MpiGroup, StartUpCheckNamesTheRankThatDiffersOrFailed) {
  MpiGroup& g = Group();
  const int last = g.size() - 1;
  RankSettings settings = {{"net", "lenet"}, {"lr", g.rank() == last ? "0.2" : "0.1"}};
  try {
    CheckRanksAgree(g, settings, "", kTimeout);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last) +
                                         " differs from rank 0 in lr: 0.2, rank 0 has 0.1"),
              std::string::npos)
        << e.what();
  }
  try {
    CheckRanksAgree(g, {}, g.rank() == last ? "cannot open /data/shard" : "", kTimeout);
    FAIL() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(last) + " of " +
                                         std::to_string(g.size()) +
                                         " cannot start: cannot open /data/shard"),
              std::string::npos)
        << e.what();
  }
  settings[1].second = "0.1";
  EXPECT_NO_THROW(CheckRanksAgree(g, settings, "", kTimeout));
}

TEST(MpiGroup, AbortMakesLaterCollectivesThrow) {
  MpiGroup g(MPI_COMM_WORLD);  // a group of its own: this one ends broken
  g.Abort("learner 3 (device 1): loss is nan");
  float x = 1;
  EXPECT_THROW(g.AllReduceSum(g.rank(), &x, 1, nullptr, kTimeout), Error);
  EXPECT_THROW(g.AllGather("x", kTimeout), Error);
  EXPECT_TRUE(g.broken());
}

}  // namespace
}  // namespace crossbow

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  crossbow::InitMpi();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {  // one report: rank 0's (a failure on another rank still fails the exit code)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return failed;
}
