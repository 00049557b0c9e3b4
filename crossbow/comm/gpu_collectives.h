#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "crossbow/comm/process_group.h"
#include "crossbow/core/context.h"

namespace crossbow {

// The GPU levels of MakeCollectives (make_collectives.h), chosen in gpu_collectives_cuda.cc.
// One rank per distinct GPU, in that order: ncclCommInitAll, one grouped ncclAllReduce per
// collective (nccl_cuda.cc).
std::unique_ptr<Collectives> MakeNcclCollectives(const std::vector<int>& gpus);
// `ranks` logical devices on GPU `gpu`: a rank-ordered sum over their buffers on that GPU
// (peer_copy_cuda.cc).
std::unique_ptr<Collectives> MakePeerCopyCollectives(int gpu, int ranks);
// This rank's `gpu` among every rank's of `group`: a group of one locally whose AllReduceSum sums
// over every rank with NCCL, the communicator bootstrapped over `group` within `timeout`
// (rank_nccl_cuda.cc). A ValueError where the build lacks MPI.
std::unique_ptr<Collectives> MakeRankNcclCollectives(ProcessGroup& group, Device gpu,
                                                     std::chrono::milliseconds timeout);

}  // namespace crossbow
