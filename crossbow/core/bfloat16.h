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
// Written as a select on the bits, which loops vectorise, rather than a branch.
inline uint16_t FloatToBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint32_t nan = (bits >> 16) | 0x40u;
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  return static_cast<uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

// An element of a float tensor (float, or uint16_t holding a bfloat16) as float, and back.
inline float ToFloat(float x) { return x; }
inline float ToFloat(uint16_t bf16) { return Bf16ToFloat(bf16); }
template <class T>
T FromFloat(float x);
template <>
inline float FromFloat<float>(float x) {
  return x;
}
template <>
inline uint16_t FromFloat<uint16_t>(float x) {
  return FloatToBf16(x);
}

}  // namespace crossbow
