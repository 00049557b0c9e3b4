#pragma once

// Checks that a result was computed on half-precision copies of its inputs (bfloat16 or fp16)
// and written in that precision, as a GPU convolution in precision bf16 or fp16 is: tight
// against fp32 on the rounded inputs, and far enough from fp32 on the original inputs that a
// path computing in fp32 or TF32 fails (tests/cpp/half_checks_test.cc shows both on the CPU).
#include <string>
#include <vector>

#include "crossbow/core/precision.h"

namespace crossbow::testing {

// x rounded to the nearest value with `bits` significant bits (ties to even) whose exponent is
// at least `min_exponent`, below which values are that exponent's multiples (subnormals):
// bfloat16 is (8, -126), fp16 (11, -14), TF32 (11, -126). Overflow is not modelled.
float RoundToSignificantBits(float x, int bits, int min_exponent);
// Significant bits of bf16 (8) and fp16 (11).
int SignificantBits(Precision half);
float RoundToHalf(float x, Precision half);
std::vector<float> RoundedToHalf(std::vector<float> values, Precision half);

// Each of `rounded` is `exact` rounded to `bits` significant bits, give or take one unit in the
// last place (the sums behind them may run in another order), within 1e-4 of 0.
void ExpectRoundingOf(const std::vector<float>& rounded, const std::vector<float>& exact, int bits,
                      const std::string& what);

// `got` is the result of computing on `half` copies of the inputs: `rounded_inputs` (fp32 on the
// rounded inputs) rounded (ExpectRoundingOf); every element a value of the type (where normal);
// and its largest distance from `unrounded` (fp32 on the inputs as given) more than 2^-(bits+2)
// of `unrounded`'s largest magnitude, which rounding the outputs alone exceeds wherever a few
// outputs lie near the largest.
void ExpectHalfPrecisionResult(const std::vector<float>& got,
                               const std::vector<float>& rounded_inputs,
                               const std::vector<float>& unrounded, Precision half,
                               const std::string& what);

}  // namespace crossbow::testing
