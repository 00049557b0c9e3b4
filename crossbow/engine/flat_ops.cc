#include "crossbow/engine/flat_ops.h"

namespace crossbow {
namespace flat {

void Correction(const float* __restrict w, const float* __restrict z, float alpha,
                float* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = alpha * (w[i] - z[i]);
}

void Subtract(const float* __restrict c, float* __restrict w, int64_t n) {
  for (int64_t i = 0; i < n; ++i) w[i] -= c[i];
}

void Accumulate(const float* __restrict x, float* __restrict sum, int64_t n) {
  for (int64_t i = 0; i < n; ++i) sum[i] += x[i];
}

void Scale(float scale, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= scale;
}

void UpdateAverage(const float* __restrict sum_c, float mu, float* __restrict z,
                   float* __restrict z_prev, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float current = z[i];
    z[i] = current + sum_c[i] + mu * (current - z_prev[i]);
    z_prev[i] = current;
  }
}

void MomentumStep(const float* __restrict x, float scale, float shift, float lr, float mu,
                  bool nesterov, float* __restrict z, float* __restrict u, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float d = scale * x[i] - shift * z[i];
    const float v = mu * u[i] + d;
    u[i] = v;
    z[i] += lr * (nesterov ? d + mu * v : v);
  }
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
