#pragma once

#include <cuda_runtime.h>

#include "operators/broadcast.h"

namespace crossbow::cuda {

// y = a * b broadcast, over l.a_numel floats.
void LaunchMul(const broadcast::Layout& l, const float* a, const float* b, float* y,
               cudaStream_t stream);
// da = dy * b broadcast, where da is not null; db = the sums of dy * a over each of b's
// elements (one block each, summed in a fixed order), where db is not null.
void LaunchMulGradient(const broadcast::Layout& l, const float* a, const float* b, const float* dy,
                       float* da, float* db, cudaStream_t stream);

}  // namespace crossbow::cuda
