#pragma once

#include <cuda_runtime.h>

namespace crossbow::cuda {

// *step += 1 on the device, one thread: launched after a kernel that read the count in every
// thread (AdamW, Lookahead), so that none of them sees it change.
void LaunchCountStep(float* step, cudaStream_t stream);

}  // namespace crossbow::cuda
