#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace crossbow {

// bfloat16 is the top half of an IEEE float: the same exponent, 7 bits of mantissa.

inline float Bf16ToFloat(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float x;
  std::memcpy(&x, &wide, sizeof x);
  return x;
}

// Rounds to the nearest bfloat16, ties to even, as oneDNN's reorders do. A NaN stays a NaN
// (rounding its low mantissa bits away could make it an infinity).
inline uint16_t FloatToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if (std::isnan(x)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace crossbow
