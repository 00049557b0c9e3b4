#include "crossbow/engine/flat_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

#include "crossbow/comm/in_process.h"
#include "crossbow/core/enforce.h"
#include "tests/cpp/expect_error.h"

namespace crossbow {
namespace {

using std::chrono::milliseconds;

TEST(SmaKernels, AllFiniteFindsNanAndInfinityAnywhere) {
  std::vector<float> x(37, 1e38f);
  EXPECT_TRUE(flat::AllFinite(x.data(), 37));
  for (float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    for (int at : {0, 15, 36}) {
      std::vector<float> y = x;
      y[at] = bad;
      EXPECT_FALSE(flat::AllFinite(y.data(), 37)) << bad << " at " << at;
    }
  }
}

TEST(SmaKernels, MatchTheEquations) {
  // 37 elements: a vector body and a scalar tail.
  const int n = 37;
  std::vector<float> w(n), z(n), z_prev(n), c(n), sum(n);
  for (int i = 0; i < n; ++i) {
    w[i] = 0.1f * i;
    z[i] = 1.f - 0.05f * i;
    z_prev[i] = 0.5f;
    sum[i] = 0.01f * i;
  }
  flat::Correction(w.data(), z.data(), 0.1f, c.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(c[i], 0.1f * (w[i] - z[i]));
  std::vector<float> w2 = w;
  flat::Subtract(c.data(), w2.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(w2[i], w[i] - c[i]);
  const std::vector<float> z0 = z, zp0 = z_prev;
  flat::UpdateAverage(sum.data(), 0.9f, z.data(), z_prev.data(), n);
  for (int i = 0; i < n; ++i) {
    ASSERT_FLOAT_EQ(z[i], z0[i] + sum[i] + 0.9f * (z0[i] - zp0[i]));
    ASSERT_EQ(z_prev[i], z0[i]);
  }
  std::vector<float> acc(n, 1.f);
  flat::Accumulate(w.data(), acc.data(), n);
  flat::Scale(2.f, acc.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(acc[i], 2.f * (1.f + w[i]));
  EXPECT_NEAR(
      flat::SquaredDistance(w.data(), w2.data(), n),
      [&] {
        double s = 0;
        for (float v : c) s += double(v) * v;
        return s;
      }(),
      1e-6);
}

TEST(InProcessCollectives, SumsInRankOrderOnEveryRank) {
  InProcessCollectives comm(3);
  std::vector<std::vector<float>> data = {{1, 2}, {10, 20}, {100, 200}};
  for (int round = 0; round < 50; ++round) {  // back-to-back collectives must not mix
    std::vector<std::thread> threads;
    std::vector<std::vector<float>> buf = data;
    for (int r = 0; r < 3; ++r) {
      threads.emplace_back([&, r] { comm.AllReduceSum(r, buf[r].data(), 2, milliseconds(10000)); });
    }
    for (auto& t : threads) t.join();
    for (int r = 0; r < 3; ++r) ASSERT_EQ(buf[r], (std::vector<float>{111, 222})) << round;
  }
}

TEST(InProcessCollectives, TimesOutWhenARankNeverArrives) {
  InProcessCollectives comm(2);
  float x = 1;
  try {
    comm.AllReduceSum(0, &x, 1, milliseconds(50));
    FAIL() << "no timeout";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
  }
  EXPECT_ERROR(comm.AllReduceSum(1, &x, 1, milliseconds(50)), Error,
               "rank 0 timed out waiting for the other ranks");  // the group is broken
}

TEST(InProcessCollectives, AbortWakesAWaitingRank) {
  InProcessCollectives comm(2);
  std::string error;
  std::thread waiter([&] {
    float x = 1;
    try {
      comm.AllReduceSum(1, &x, 1, milliseconds(60000));
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
  EXPECT_ERROR(comm.AllReduceSum(2, x, 2, milliseconds(10)), ValueError,
               "all-reduce: rank 2 is outside the group of 2");
  std::thread first([&] {
    try {
      comm.AllReduceSum(0, x, 2, milliseconds(200));
    } catch (const Error&) {
    }
  });
  std::this_thread::sleep_for(milliseconds(20));
  float y[1] = {0};
  EXPECT_ERROR(comm.AllReduceSum(1, y, 1, milliseconds(200)), ValueError,
               "all-reduce: rank 1 sends 1 floats, another rank sent 2");
  first.join();
  EXPECT_ERROR(InProcessCollectives(0), ValueError,
               "a collectives group needs at least one rank, got 0");
}

}  // namespace
}  // namespace crossbow
