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
  int bad = 0;  // x - x is 0 for finite x, NaN for NaN and infinity: one vectorised pass
  for (int64_t i = 0; i < n; ++i) bad |= !(x[i] - x[i] == 0.f);
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
