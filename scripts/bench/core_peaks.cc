// What one core can do alone and what each keeps when every core works at once: fp32 FMA
// throughput (AVX-512), bf16 tile dot products (AMX, where the CPU has it) and memory
// bandwidth (a triad over arrays in L2 and far past the last-level cache). A virtual machine's
// "cores" may share a physical core (SMT siblings: FMA throughput halves when both work), an
// AMX unit, or memory bandwidth; docs/history/results-0.1.0.md uses it to tell which holds
// back learners that run side by side. Needs AVX-512F; run it on a quiet machine, a few times:
//
//   g++ -O3 -march=native -pthread -o /tmp/core_peaks scripts/bench/core_peaks.cc && /tmp/core_peaks
//
// One line per kernel: its rate on one core, the mean rate of each core with all of them
// running it, and the fraction each keeps.
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

// Work of one kernel on one core: runs a fixed amount and returns it in the kernel's unit
// (GFLOP, GB) together with a value that depends on every result, so nothing is elided.
using Kernel = std::function<double(float* check)>;

double FmaFp32(float* check) {
  constexpr int kChains = 12;  // enough independent 512-bit FMAs to hide their latency
  constexpr long kIterations = 100000000;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + i * 1e-7f);
  // acc -> b / (1 - a) = 0.1: no overflow and no denormals however long it runs.
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long n = 0; n < kIterations; ++n) {
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  for (int i = 0; i < kChains; ++i) *check += _mm512_reduce_add_ps(acc[i]);
  return static_cast<double>(kIterations) * kChains * 16 * 2 / 1e9;
}

#ifdef __AMX_BF16__
struct TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};

double AmxBf16(float* check) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.bytes_per_row[t] = 64, config.rows[t] = 16;
  _tile_loadconfig(&config);
  alignas(64) uint16_t operand[16 * 32];
  for (auto& v : operand) v = 0x3c24;  // bf16 0.01: sums stay far from overflow
  alignas(64) float out[16 * 16];
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  _tile_loadd(6, operand, 64);
  _tile_loadd(7, operand, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  constexpr long kIterations = 20000000;
  for (long n = 0; n < kIterations; ++n) {  // four independent accumulators
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  *check += out[0];
  _tile_release();
  return static_cast<double>(kIterations) * 4 * 16 * 16 * 32 * 2 / 1e9;
}

bool RequestAmx() {
  constexpr int kReqXcompPerm = 0x1023, kXtileData = 18;  // Linux's arch_prctl for AMX state
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXtileData) == 0;
}
#endif

// a = b + s * c over arrays of `floats` each, `passes` times: 12 bytes moved per element.
Kernel Triad(size_t floats, int passes) {
  return [floats, passes](float* check) {
    std::vector<float> a(floats, 0.f), b(floats, 1.f), c(floats, 2.f);
    for (int p = 0; p < passes; ++p) {
      for (size_t i = 0; i < floats; ++i) a[i] = b[i] + 0.5f * c[i];
      b[p % floats] = a[(p + 1) % floats];  // each pass depends on the last
    }
    *check += a[floats / 2];
    return static_cast<double>(floats) * 12 * passes / 1e9;
  };
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Rate (units/s) of each of `cores` threads, pinned one per CPU, running the kernel at once.
std::vector<double> RunOn(int cores, const Kernel& kernel, float* check) {
  std::vector<double> rates(cores);
  std::vector<float> checks(cores, 0.f);
  std::vector<std::thread> threads;
  for (int c = 0; c < cores; ++c) {
    threads.emplace_back([&, c] {
      PinTo(c);
      const auto start = std::chrono::steady_clock::now();
      const double units = kernel(&checks[c]);
      rates[c] =
          units / std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  for (auto& t : threads) t.join();
  for (float v : checks) *check += v;
  return rates;
}

}  // namespace

int main() {
  const int cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  struct Named {
    std::string name, unit;
    Kernel kernel;
  };
  std::vector<Named> kernels = {
      {"fp32 FMA (AVX-512)", "GFLOP/s", FmaFp32},
      {"triad in L2 (3 x 128 KiB)", "GB/s", Triad(32 << 10, 200000)},
      {"triad in memory (3 x 512 MiB)", "GB/s", Triad(128 << 20, 4)},
  };
#ifdef __AMX_BF16__
  if (RequestAmx()) {
    kernels.insert(kernels.begin() + 1, {"bf16 tile dot products (AMX)", "GFLOP/s", AmxBf16});
  } else {
    std::printf("AMX: the kernel refused its tile state (arch_prctl); not measured\n");
  }
#else
  std::printf("AMX: not built (no AMX-BF16 on the compiling CPU); not measured\n");
#endif
  float check = 0;
  std::printf("%d cores online\n", cores);
  for (const auto& k : kernels) {
    const double alone = RunOn(1, k.kernel, &check)[0];
    double together = 0;
    for (double r : RunOn(cores, k.kernel, &check)) together += r / cores;
    std::printf("%-32s one core %8.1f %s; each of %d at once %8.1f (%.2f of alone)\n",
                k.name.c_str(), alone, k.unit.c_str(), cores, together, together / alone);
  }
  std::printf("(check value %.3g)\n", check);
  return 0;
}
