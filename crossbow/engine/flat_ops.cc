#include "crossbow/engine/flat_ops.h"

namespace crossbow {
namespace flat {

void Accumulate(const float* __restrict x, float* __restrict sum, int64_t n) {
  for (int64_t i = 0; i < n; ++i) sum[i] += x[i];
}

void Scale(float scale, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

bool AllFinite(const float* __restrict x, int64_t n) {
  // x - x is 0 for finite x, NaN for NaN and infinity: one vectorised pass. It reads the four
  // quarters side by side: a gradient of tens of MB comes from memory, and one thread reads
  // four streams faster than one (ResNet-18's 45 MB in its bf16 step at 128 px: 3.5 against
  // 4.6 ms on an Intel Xeon with AMX, docs/history/results-0.1.0.md).
  const int64_t quarter = n / 4;
  const float *a = x, *b = x + quarter, *c = x + 2 * quarter, *d = x + 3 * quarter;
  int bad = 0;
  for (int64_t i = 0; i < quarter; ++i)
    bad |= !(a[i] - a[i] == 0.f) | !(b[i] - b[i] == 0.f) | !(c[i] - c[i] == 0.f) |
           !(d[i] - d[i] == 0.f);
  for (int64_t i = 4 * quarter; i < n; ++i) bad |= !(x[i] - x[i] == 0.f);
  return bad == 0;
}

double SquaredDistance(const float* __restrict a, const float* __restrict b, int64_t n) {
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = a[i] - b[i];
    total += d * d;
  }
  return total;
}

}  // namespace flat
}  // namespace crossbow
