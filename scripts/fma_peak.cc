// One core's fp32 FMA peak, measured: 12 independent chains of 512-bit FMAs (enough to hide
// the FMA latency on current x86 cores), for the "fraction of the FMA peak" of
// docs/results.md. Needs AVX-512F; run it on a quiet machine, a few times:
//
//   g++ -O3 -march=native -o /tmp/fma_peak scripts/fma_peak.cc && /tmp/fma_peak
#include <immintrin.h>

#include <chrono>
#include <cstdio>

int main() {
  constexpr int kChains = 12;
  constexpr long kIterations = 200000000;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + i * 1e-7f);
  // acc -> b / (1 - a) = 0.1: no overflow and no denormals however long it runs.
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  const auto start = std::chrono::steady_clock::now();
  for (long n = 0; n < kIterations; ++n) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  float sum = 0;  // keeps the loop from being optimised away
  for (int i = 0; i < kChains; ++i) sum += _mm512_reduce_add_ps(acc[i]);
  const double flops = static_cast<double>(kIterations) * kChains * 16 * 2;
  std::printf("%.1f GFLOP/s fp32 on one core (check value %.3f)\n", flops / seconds / 1e9, sum);
  return 0;
}
