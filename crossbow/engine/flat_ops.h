#pragma once

#include <cstdint>

namespace crossbow {
namespace flat {

// Element-wise kernels over flat float buffers that the engine and every synchroniser use
// (sums, scaling, checks); an algorithm's own arithmetic lives with it in engine/sync/.
// Branch-free loops over restrict pointers, so that they vectorise.

// sum += x.
void Accumulate(const float* x, float* sum, int64_t n);
// x *= scale.
void Scale(float scale, float* x, int64_t n);
// Whether no x_i is NaN or infinite.
bool AllFinite(const float* x, int64_t n);
// sum over i of (a_i - b_i)^2, accumulated in double.
double SquaredDistance(const float* a, const float* b, int64_t n);

}  // namespace flat
}  // namespace crossbow
