#include "operators/random_cuda.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

// The generator of the CUDA dropout and fillers, run on the host (its functions are
// __host__ __device__): no GPU needed.
namespace crossbow::cuda {
namespace {

void ExpectWords(const RandomWords& got, const RandomWords& want) {
  for (int k = 0; k < 4; ++k) EXPECT_EQ(got.v[k], want.v[k]) << "word " << k;
}

// Random123's known-answer vectors for Philox4x32-10.
TEST(CudaRandom, PhiloxMatchesTheReferenceVectors) {
  ExpectWords(Philox4x32x10({{0, 0, 0, 0}}, 0, 0),
              {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}});
  ExpectWords(Philox4x32x10({{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u),
              {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}});
  ExpectWords(Philox4x32x10({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
                            0x299f31d0u),
              {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}});
}

TEST(CudaRandom, DrawsDependOnSeedOffsetAndGroup) {
  const RandomWords base = RandomDraw(7, 0, 0);
  for (const RandomWords& other :
       {RandomDraw(8, 0, 0), RandomDraw(7, 1, 0), RandomDraw(7, 0, 1), RandomDraw(7, 0, 1ull << 32),
        RandomDraw(7, 1ull << 32, 0), RandomDraw(7ull << 32, 0, 0)}) {
    EXPECT_NE(base.v[0], other.v[0]);
  }
}

// Mean and standard deviation of n draws of `value(words, k)`, four values a draw.
template <typename F>
std::pair<double, double> Moments(int64_t n, F value) {
  double sum = 0, squares = 0;
  for (int64_t g = 0; g < n / kElementsPerDraw; ++g) {
    const RandomWords words = RandomDraw(42, 3, g);
    for (int k = 0; k < kElementsPerDraw; ++k) {
      const double v = value(words, k);
      sum += v;
      squares += v * v;
    }
  }
  const double mean = sum / n;
  return {mean, std::sqrt(squares / n - mean * mean)};
}

TEST(CudaRandom, UniformIsInTheUnitIntervalWithTheRightMoments) {
  EXPECT_EQ(UniformFromBits(0), 0.f);
  EXPECT_LT(UniformFromBits(~0u), 1.f);
  const auto [mean, std] =
      Moments(1 << 18, [](const RandomWords& w, int k) { return UniformFromBits(w.v[k]); });
  EXPECT_NEAR(mean, 0.5, 0.003);
  EXPECT_NEAR(std, 1 / std::sqrt(12.0), 0.002);
}

TEST(CudaRandom, BoxMullerGivesStandardNormals) {
  float z0, z1;
  NormalsFromBits(0, 0, &z0, &z1);  // the smallest u1 still gives finite values
  EXPECT_TRUE(std::isfinite(z0) && std::isfinite(z1));
  double within = 0;
  const int64_t n = 1 << 18;
  const auto [mean, std] = Moments(n, [&](const RandomWords& w, int k) {
    float z[2];
    NormalsFromBits(w.v[k & 2], w.v[(k & 2) + 1], &z[0], &z[1]);
    within += std::fabs(z[k & 1]) < 1.f;
    return z[k & 1];
  });
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(std, 1.0, 0.01);
  EXPECT_NEAR(within / n, 0.6827, 0.005);
}

}  // namespace
}  // namespace crossbow::cuda
