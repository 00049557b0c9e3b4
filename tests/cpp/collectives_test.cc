#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "crossbow/comm/in_process.h"
#include "crossbow/comm/make_collectives.h"
#include "crossbow/core/device_backend.h"
#include "crossbow/core/enforce.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

using std::chrono::milliseconds;

const Device kCpu{DeviceType::kCPU, 0}, kGpu0{DeviceType::kCUDA, 0}, kGpu1{DeviceType::kCUDA, 1};

// One all-reduce of host memory, buffer r on rank r's thread.
void AllReduceOnEveryRank(Collectives& comm, std::vector<std::vector<float>>* buffers) {
  std::vector<std::thread> threads;
  for (int r = 0; r < comm.size(); ++r) {
    threads.emplace_back([&, r] {
      std::vector<float>& b = (*buffers)[r];
      comm.AllReduceSum(r, b.data(), b.size(), nullptr, milliseconds(10000));
    });
  }
  for (auto& t : threads) t.join();
}

// Rank 1 of a job of two whose other rank holds the same sums: an all-reduce doubles them.
class TwoRanks final : public ProcessGroup {
 public:
  int size() const override { return 2; }
  int rank() const override { return 1; }
  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    milliseconds) override {
    calls.push_back(rank);
    host_memory = host_memory && context == nullptr;
    for (size_t i = 0; i < count; ++i) data[i] *= 2;
  }
  void Abort(const std::string&) override {}
  std::vector<std::string> AllGather(const std::string&, milliseconds) override { return {}; }
  std::vector<std::string> Gather(const std::string&, int, milliseconds) override { return {}; }

  std::vector<int> calls;  // the rank of every all-reduce
  bool host_memory = true;
};

TEST(InProcessCollectives, SumsInRankOrderOnEveryRank) {
  InProcessCollectives comm(3);
  for (int round = 0; round < 50; ++round) {  // back-to-back collectives must not mix
    std::vector<std::vector<float>> buffers = {{1, 2}, {10, 20}, {100, 200}};
    AllReduceOnEveryRank(comm, &buffers);
    for (int r = 0; r < 3; ++r) ASSERT_EQ(buffers[r], (std::vector<float>{111, 222})) << round;
  }
}

TEST(InProcessCollectives, TimesOutWhenARankNeverArrives) {
  InProcessCollectives comm(2);
  float x = 1;
  try {
    comm.AllReduceSum(0, &x, 1, nullptr, milliseconds(50));
    FAIL() << "no timeout";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_ERROR(comm.AllReduceSum(1, &x, 1, nullptr, milliseconds(50)), Error,
               "rank 0 timed out waiting for the other ranks");  // the group is broken
}

TEST(InProcessCollectives, AbortWakesAWaitingRank) {
  InProcessCollectives comm(2);
  std::string error;
  std::thread waiter([&] {
    float x = 1;
    try {
      comm.AllReduceSum(1, &x, 1, nullptr, milliseconds(60000));
    } catch (const Error& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(milliseconds(20));
  comm.Abort("learner 3 failed");
  waiter.join();
  EXPECT_NE(error.find("learner 3 failed"), std::string::npos) << error;
}

TEST(InProcessCollectives, RejectsMismatchedCountsAndRanks) {
  InProcessCollectives comm(2);
  float x[2] = {0, 0};
  EXPECT_ERROR(comm.AllReduceSum(2, x, 2, nullptr, milliseconds(10)), ValueError,
               "all-reduce: rank 2 is outside the group of 2");
  std::thread first([&] {
    try {
      comm.AllReduceSum(0, x, 2, nullptr, milliseconds(200));
    } catch (const Error&) {
    }
  });
  std::this_thread::sleep_for(milliseconds(20));
  float y[1] = {0};
  EXPECT_ERROR(comm.AllReduceSum(1, y, 1, nullptr, milliseconds(200)), ValueError,
               "all-reduce: rank 1 sends 1 floats, another rank sent 2");
  first.join();
  EXPECT_ERROR(InProcessCollectives(0), ValueError,
               "a collectives group needs at least one rank, got 0");
}

TEST(MakeCollectives, CpuDevicesMeetInProcessChainedToTheProcessGroup) {
  const auto alone = MakeCollectives({kCpu, kCpu, kCpu}, nullptr, milliseconds(100));
  ASSERT_NE(dynamic_cast<InProcessCollectives*>(alone.get()), nullptr);
  EXPECT_EQ(alone->size(), 3);

  auto group = std::make_shared<TwoRanks>();
  const auto local = MakeCollectives({kCpu, kCpu}, group, milliseconds(100));
  ASSERT_NE(dynamic_cast<InProcessCollectives*>(local.get()), nullptr);
  ASSERT_EQ(local->size(), 2);
  std::vector<std::vector<float>> buffers = {{1, 2}, {10, 20}};
  AllReduceOnEveryRank(*local, &buffers);
  // The server sum crossed the group once, as this process's rank, and came back to both devices.
  EXPECT_EQ(group->calls, std::vector<int>{1});
  EXPECT_TRUE(group->host_memory);
  for (const auto& b : buffers) EXPECT_EQ(b, (std::vector<float>{22, 44}));
}

TEST(MakeCollectives, OneGpuAloneIsAGroupOfOne) {
  const auto comm = MakeCollectives({kGpu0}, nullptr, milliseconds(100));
  ASSERT_NE(dynamic_cast<InProcessCollectives*>(comm.get()), nullptr);
  EXPECT_EQ(comm->size(), 1);
}

TEST(MakeCollectives, RejectsSeveralGpusPerRankAndMixedOrNoDevices) {
  EXPECT_ERROR(MakeCollectives({kGpu0, kGpu1}, std::make_shared<TwoRanks>(), milliseconds(100)),
               ValueError, "rank 1: with several MPI ranks each rank drives one GPU");
  EXPECT_ERROR(MakeCollectives({kCpu, kGpu0}, nullptr, milliseconds(100)), ValueError,
               "devices cpu and cuda:0: CPU and GPU devices cannot be mixed");
  EXPECT_ERROR(MakeCollectives({}, nullptr, milliseconds(100)), ValueError,
               "collectives need at least one device");
}

TEST(MakeCollectives, GpusNeedACudaBuildAndASupportedLayout) {
  if (!HasDeviceBackend(DeviceType::kCUDA)) {
    EXPECT_ERROR(MakeCollectives({kGpu0, kGpu1}, nullptr, milliseconds(100)), ValueError,
                 "collectives between GPUs need a Crossbow built with CUDA");
    EXPECT_ERROR(MakeCollectives({kGpu0}, std::make_shared<TwoRanks>(), milliseconds(100)),
                 ValueError, "collectives between GPUs need a Crossbow built with CUDA");
    return;
  }
  EXPECT_ERROR(MakeCollectives({kGpu0, kGpu0, kGpu1, kGpu1}, nullptr, milliseconds(100)),
               ValueError, "several logical devices on each of several GPUs are not supported");
}

}  // namespace
}  // namespace crossbow
