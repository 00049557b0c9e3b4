// The half-precision checks of half_checks.h, on a CPU convolution standing in for each path a
// GPU convolution in precision bf16 or fp16 could take: on half-precision copies with results
// written in half precision (passes), in fp32, or in TF32 (both fail). The GPU tests that use
// them (conv_cudnn_cuda_test.cc) cannot run without a GPU; this shows here that they can fail.
#include "tests/cpp/half_checks.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "crossbow/core/bfloat16.h"
#include "tests/cpp/op_test_util.h"

namespace crossbow::testing {
namespace {

TEST(HalfChecks, RoundToSignificantBitsRoundsTiesToEvenAndKeepsSubnormals) {
  const float unit = std::ldexp(1.f, -10);  // fp16's at 1
  EXPECT_EQ(RoundToHalf(1 + unit / 2, Precision::kFP16), 1.f);
  EXPECT_EQ(RoundToHalf(1 + 1.5f * unit, Precision::kFP16), 1 + 2 * unit);
  EXPECT_EQ(RoundToHalf(1 + 0.6f * unit, Precision::kFP16), 1 + unit);
  EXPECT_EQ(RoundToHalf(-3.f * std::ldexp(1.f, -25), Precision::kFP16), -std::ldexp(1.f, -23));
  EXPECT_EQ(RoundToHalf(std::ldexp(1.f, -26), Precision::kFP16), 0.f);
  std::mt19937 rng(5);
  std::normal_distribution<float> values(0.f, 100.f);
  for (int i = 0; i < 1000; ++i) {
    const float x = values(rng);
    ASSERT_EQ(RoundToHalf(x, Precision::kBF16), Bf16ToFloat(FloatToBf16(x))) << x;
  }
}

// Y of a strided, grouped convolution (288 products per output) on inputs rounded by `round`.
std::vector<float> ConvOf(const std::vector<float>& x, const std::vector<float>& w,
                          const std::function<float(float)>& round) {
  OpHarness h;
  std::vector<float> rx = x, rw = w;
  for (float& v : rx) v = round(v);
  for (float& v : rw) v = round(v);
  h.Feed("X", {4, 64, 16, 16}, rx);
  h.Feed("W", {6, 32, 3, 3}, rw);
  h.Run(MakeOperator("Conv", {"X", "W"}, {"Y"},
                     {{"kernel", int64_t{3}},
                      {"stride", int64_t{2}},
                      {"pad", int64_t{1}},
                      {"group", int64_t{2}}}));
  return h.Fetch("Y");
}

// Whether `check` reports a failure whose message contains `text` (caught, not reported).
bool Fails(const std::function<void()>& check, const std::string& text) {
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check();
  }
  for (int i = 0; i < results.size(); ++i) {
    if (std::string(results.GetTestPartResult(i).message()).find(text) != std::string::npos) {
      return true;
    }
  }
  return false;
}

TEST(HalfChecks, PassOnlyAComputationOnHalfCopies) {
  OpHarness inputs;
  inputs.Feed("X", {4, 64, 16, 16});
  inputs.Feed("W", {6, 32, 3, 3});
  const std::vector<float> x = inputs.Fetch("X"), w = inputs.Fetch("W");
  const std::vector<float> unrounded = ConvOf(x, w, [](float v) { return v; });
  // TF32 keeps 11 significant bits and fp32's exponents, and writes fp32.
  const std::vector<float> tf32 =
      ConvOf(x, w, [](float v) { return RoundToSignificantBits(v, 11, -126); });
  for (Precision half : {Precision::kBF16, Precision::kFP16}) {
    SCOPED_TRACE(PrecisionName(half));
    const std::vector<float> rounded_inputs =
        ConvOf(x, w, [half](float v) { return RoundToHalf(v, half); });
    ExpectHalfPrecisionResult(RoundedToHalf(rounded_inputs, half), rounded_inputs, unrounded, half,
                              "on half copies");
    EXPECT_TRUE(Fails(
        [&] { ExpectHalfPrecisionResult(unrounded, rounded_inputs, unrounded, half, "fp32"); },
        "fp32: as near the fp32 result"));
    EXPECT_TRUE(
        Fails([&] { ExpectHalfPrecisionResult(tf32, rounded_inputs, unrounded, half, "tf32"); },
              "tf32: results not written in"));
    // and in bf16 TF32's 11 bits come too near fp32 on the inputs as given
    if (half == Precision::kBF16) {
      EXPECT_TRUE(
          Fails([&] { ExpectHalfPrecisionResult(tf32, rounded_inputs, unrounded, half, "tf32"); },
                "tf32: as near the fp32 result"));
    }
  }
}

}  // namespace
}  // namespace crossbow::testing
