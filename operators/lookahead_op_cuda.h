#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace crossbow::cuda {

// Lookahead over n floats, in place (see LookaheadOp): the step count is read and incremented on
// the device, so that a recorded graph takes the slow step on every k-th replay.
void LaunchLookahead(float* param, float* slow, float* step, int64_t n, int64_t k, float alpha,
                     cudaStream_t stream);

}  // namespace crossbow::cuda
