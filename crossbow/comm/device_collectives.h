#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/core/context.h"

namespace crossbow {

// Collectives over buffers in GPU memory, one rank per engine device (one thread per rank).
// Every rank calls each collective in the same order with the same count.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;

  virtual int size() const = 0;
  // Replaces data[0, count) (on the rank's GPU) with its sum over all ranks, bit-identical on
  // every rank. The work is ordered on `context`'s stream: after what was issued there before,
  // before what is issued after. Throws crossbow::Error, with the library's error text, when
  // the ranks do not all arrive within `timeout`, the reduction fails or does not finish in
  // time, or the group was aborted.
  virtual void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                            std::chrono::milliseconds timeout) = 0;
  // Makes every pending and later collective throw `reason`.
  virtual void Abort(const std::string& reason) = 0;
};

// For ranks on `gpus` (one entry per rank): NCCL between distinct GPUs; a rank-ordered sum on
// the GPU when every rank shares one GPU (so that the multi-device path runs on one GPU).
// Mixing the two is a ValueError.
std::unique_ptr<DeviceCollectives> MakeDeviceCollectives(const std::vector<Device>& gpus);
using DeviceCollectivesFactory =
    std::function<std::unique_ptr<DeviceCollectives>(const std::vector<Device>&)>;
bool RegisterDeviceCollectives(DeviceCollectivesFactory factory);

class ProcessGroup;
// Across the ranks of an MPI job, each driving one GPU (`gpu`): one rank of size 1 locally,
// whose AllReduceSum sums over every rank of `group` with NCCL (the communicator bootstrapped
// over MPI, comm/nccl_bootstrap.h). A ValueError where the build lacks CUDA, MPI or NCCL.
std::unique_ptr<DeviceCollectives> MakeRankDeviceCollectives(ProcessGroup& group, Device gpu,
                                                             std::chrono::milliseconds timeout);
using RankDeviceCollectivesFactory = std::function<std::unique_ptr<DeviceCollectives>(
    ProcessGroup&, Device, std::chrono::milliseconds)>;
bool RegisterRankDeviceCollectives(RankDeviceCollectivesFactory factory);

}  // namespace crossbow
