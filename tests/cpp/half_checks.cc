#include "tests/cpp/half_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {

float RoundToSignificantBits(float x, int bits, int min_exponent) {
  if (x == 0.f || !std::isfinite(x)) return x;
  int exponent = 0;
  std::frexp(x, &exponent);  // |x| in [2^(exponent-1), 2^exponent)
  const int lead = std::max(exponent - 1, min_exponent);
  const float unit = std::ldexp(1.f, lead - (bits - 1));
  return std::nearbyint(x / unit) * unit;  // exact: unit is a power of two
}

int SignificantBits(Precision half) {
  if (half == Precision::kBF16) return 8;
  if (half == Precision::kFP16) return 11;
  ADD_FAILURE() << PrecisionName(half) << " is not a half precision (bf16, fp16)";
  return 24;
}

float RoundToHalf(float x, Precision half) {
  return RoundToSignificantBits(x, SignificantBits(half), half == Precision::kFP16 ? -14 : -126);
}

std::vector<float> RoundedToHalf(std::vector<float> values, Precision half) {
  for (float& v : values) v = RoundToHalf(v, half);
  return values;
}

void ExpectRoundingOf(const std::vector<float>& rounded, const std::vector<float>& exact, int bits,
                      const std::string& what) {
  ASSERT_EQ(rounded.size(), exact.size()) << what;
  int wrong = 0;
  for (size_t i = 0; i < rounded.size(); ++i) {
    // One unit in the last place is at most |x| / 2^(bits - 1).
    const float tolerance = std::ldexp(std::fabs(exact[i]), 1 - bits) + 1e-4f;
    if (std::fabs(rounded[i] - exact[i]) > tolerance && ++wrong <= 3) {
      ADD_FAILURE() << what << "[" << i << "] = " << rounded[i] << ", expected " << exact[i]
                    << " within " << tolerance;
    }
  }
  EXPECT_EQ(wrong, 0) << what << ": elements off by more than the rounding to " << bits
                      << " significant bits";
}

void ExpectHalfPrecisionResult(const std::vector<float>& got,
                               const std::vector<float>& rounded_inputs,
                               const std::vector<float>& unrounded, Precision half,
                               const std::string& what) {
  const int bits = SignificantBits(half);
  ExpectRoundingOf(got, rounded_inputs, bits, what);
  const float smallest_normal = std::ldexp(1.f, half == Precision::kFP16 ? -14 : -126);
  int off_grid = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i]) >= smallest_normal && RoundToHalf(got[i], half) != got[i] &&
        ++off_grid <= 3) {
      ADD_FAILURE() << what << "[" << i << "] = " << got[i] << " is no " << PrecisionName(half)
                    << " value";
    }
  }
  EXPECT_EQ(off_grid, 0) << what << ": results not written in " << PrecisionName(half);
  float largest = 0;
  for (float v : unrounded) largest = std::max(largest, std::fabs(v));
  EXPECT_GT(MaxAbsDiff(got, unrounded), std::ldexp(largest, -(bits + 2)))
      << what << ": as near the fp32 result on the unrounded inputs as fp32 or TF32 would be";
}

}  // namespace crossbow::testing
