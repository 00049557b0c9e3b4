#pragma once

#include <memory>
#include <vector>

#include "crossbow/comm/device_collectives.h"

namespace crossbow {

// One rank per distinct GPU, in that order: ncclCommInitAll, one grouped ncclAllReduce per
// collective (nccl_cuda.cc).
std::unique_ptr<DeviceCollectives> MakeNcclCollectives(const std::vector<int>& gpus);
// `ranks` logical devices on GPU `gpu`: a rank-ordered sum over their buffers on that GPU
// (peer_copy_cuda.cc).
std::unique_ptr<DeviceCollectives> MakePeerCopyCollectives(int gpu, int ranks);

}  // namespace crossbow
