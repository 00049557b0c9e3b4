#include "crossbow/engine/flat_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "crossbow/engine/sync/sma.h"

namespace crossbow {
namespace {

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
  sma::Correction(w.data(), z.data(), 0.1f, c.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(c[i], 0.1f * (w[i] - z[i]));
  std::vector<float> w2 = w;
  sma::ApplyCorrection(c.data(), w2.data(), n);
  for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(w2[i], w[i] - c[i]);
  const std::vector<float> z0 = z, zp0 = z_prev;
  sma::PolyakUpdate(sum.data(), 0.9f, z.data(), z_prev.data(), n);
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

}  // namespace
}  // namespace crossbow
