#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "crossbow/comm/process_group.h"
#include "crossbow/core/context.h"

namespace crossbow {

// The collectives of an engine whose devices are `devices` (one rank each, all CPUs or all GPUs)
// in the process group `group` (an MPI job, or nullptr):
// - CPUs: in-process, with `group` as the outer level when there is one (the hierarchy);
// - one GPU and no other rank: a group of one (nothing to sum);
// - several GPUs: NCCL between distinct GPUs, a rank-ordered sum for logical devices of one GPU;
// - a GPU per rank of a group of several: NCCL across the ranks, bootstrapped over `group`
//   within `timeout`; several GPUs per rank are a ValueError.
// GPUs in a build without CUDA, or a layout that is not supported, are a ValueError.
std::unique_ptr<Collectives> MakeCollectives(const std::vector<Device>& devices,
                                             std::shared_ptr<ProcessGroup> group,
                                             std::chrono::milliseconds timeout);

// The GPU levels, registered by the CUDA build (gpu_collectives_cuda.cc): several `gpus` of
// this process, or this rank's one GPU when `ranks` (then a group of several) is given.
using GpuCollectivesFactory = std::function<std::unique_ptr<Collectives>(
    const std::vector<Device>& gpus, ProcessGroup* ranks, std::chrono::milliseconds timeout)>;
bool RegisterGpuCollectives(GpuCollectivesFactory factory);

}  // namespace crossbow
