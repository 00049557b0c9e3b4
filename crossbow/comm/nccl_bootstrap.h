#pragma once

// NCCL across the ranks of an MPI job, one GPU per rank. Compiled only where CMake found CUDA,
// MPI and NCCL (CROSSBOW_WITH_NCCL); MPI still carries everything on the CPU path.
#ifdef CROSSBOW_WITH_NCCL

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>

#include "crossbow/comm/process_group.h"

namespace crossbow {

// An NCCL communicator over every rank of `group`, on CUDA device `device` of each: rank 0 makes
// the unique id, the group hands it to every rank (over MPI, with the collective timeout), and
// each joins with ncclCommInitRank. Errors name the rank and carry ncclGetErrorString's text.
class NcclCommunicator {
 public:
  NcclCommunicator(ProcessGroup& group, int device, std::chrono::milliseconds timeout);
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  // In place on `stream`: the sum over ranks of `count` floats in device memory.
  void AllReduceSum(float* data, size_t count, cudaStream_t stream);
  // Ends the communicator at once (work in flight is abandoned); get() is nullptr after it.
  void Abort();
  ncclComm_t get() const { return comm_; }

 private:
  ncclComm_t comm_ = nullptr;
  int rank_ = 0;
};

}  // namespace crossbow

#endif  // CROSSBOW_WITH_NCCL
