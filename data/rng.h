#pragma once

#include <cmath>
#include <cstdint>

namespace crossbow::data {

// SplitMix64: tiny, fast and the same on every platform and standard library, so that a seed
// gives the same augmentations everywhere (std::*_distribution is implementation-defined).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  int64_t UniformInt(int64_t n) { return static_cast<int64_t>(Uniform() * n); }  // [0, n)
  bool Bernoulli() { return (Next() >> 63) != 0; }

 private:
  uint64_t state_;
};

// One seed from several numbers (seed, epoch, record), each mixed in turn.
inline uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c = 0) {
  Rng rng(a);
  Rng second(rng.Next() ^ b);
  Rng third(second.Next() ^ c);
  return third.Next();
}

}  // namespace crossbow::data
