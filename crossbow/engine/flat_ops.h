#pragma once

#include <cstdint>

namespace crossbow {
namespace flat {

// Element-wise kernels over flat float buffers, for the synchronisers (engine/sync/). Branch-free
// loops over restrict pointers, so that they vectorise.

// c = alpha * (w - z): learner j's correction against its device's average model.
void Correction(const float* w, const float* z, float alpha, float* c, int64_t n);
// w -= c.
void Subtract(const float* c, float* w, int64_t n);
// sum += x.
void Accumulate(const float* x, float* sum, int64_t n);
// x *= scale.
void Scale(float scale, float* x, int64_t n);
// The central update: z' = z + sum_c + mu (z - z_prev); z_prev = z; z = z'.
void UpdateAverage(const float* sum_c, float mu, float* z, float* z_prev, int64_t n);
// A momentum step towards d = scale x - shift z: u = mu u + d; z += lr (nesterov ? d + mu u : u).
void MomentumStep(const float* x, float scale, float shift, float lr, float mu, bool nesterov,
                  float* z, float* u, int64_t n);
// Whether no x_i is NaN or infinite.
bool AllFinite(const float* x, int64_t n);
// sum over i of (a_i - b_i)^2, accumulated in double.
double SquaredDistance(const float* a, const float* b, int64_t n);

}  // namespace flat
}  // namespace crossbow
