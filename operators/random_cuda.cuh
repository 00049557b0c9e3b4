#pragma once

// Counter-based random numbers for CUDA kernels (dropout, fillers): Philox4x32-10 (Salmon et
// al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011). Every value is a pure function
// of (seed, offset, group), so kernels need no generator state: a launch reads the context's
// offset on the device, draws group g (four 32-bit words) for elements 4g..4g+3, and
// AdvanceRandomOffset then moves the offset on, on the same stream, so that a replayed CUDA
// graph draws new numbers. The functions are __host__ __device__ so that tests check them on
// the CPU.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace crossbow::cuda {

struct RandomWords {
  uint32_t v[4];
};

// Elements that one draw of four words serves.
constexpr int64_t kElementsPerDraw = 4;

__host__ __device__ inline RandomWords Philox4x32x10(RandomWords counter, uint32_t key0,
                                                     uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += 0x9E3779B9u;
      key1 += 0xBB67AE85u;
    }
    const uint64_t p0 = static_cast<uint64_t>(0xD2511F53u) * counter.v[0];
    const uint64_t p1 = static_cast<uint64_t>(0xCD9E8D57u) * counter.v[2];
    counter = {{static_cast<uint32_t>(p1 >> 32) ^ counter.v[1] ^ key0, static_cast<uint32_t>(p1),
                static_cast<uint32_t>(p0 >> 32) ^ counter.v[3] ^ key1, static_cast<uint32_t>(p0)}};
  }
  return counter;
}

// The four words of draw `group` of the launch at `offset`: the key is the seed, the counter
// (group, offset), so no two draws of one seed share a counter.
__host__ __device__ inline RandomWords RandomDraw(uint64_t seed, uint64_t offset, uint64_t group) {
  const RandomWords counter{{static_cast<uint32_t>(group), static_cast<uint32_t>(group >> 32),
                             static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)}};
  return Philox4x32x10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniform in [0, 1) from the top 24 bits (every value exactly representable in a float).
__host__ __device__ inline float UniformFromBits(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.f / 16777216.f);
}

// Two independent standard normals from two words (Box-Muller; u1 in (0, 1] keeps log finite).
__host__ __device__ inline void NormalsFromBits(uint32_t a, uint32_t b, float* z0, float* z1) {
  const float u1 = static_cast<float>((a >> 8) + 1) * (1.f / 16777216.f);
  const float theta = 6.28318530717958647692f * UniformFromBits(b);
  const float r = sqrtf(-2.f * logf(u1));
  *z0 = r * cosf(theta);
  *z1 = r * sinf(theta);
}

// Moves *offset on by one draw, ordered on `stream` after the kernels that read it.
void AdvanceRandomOffset(unsigned long long* offset, cudaStream_t stream);

}  // namespace crossbow::cuda
