#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace crossbow {

class ContextBase;

// Collective operations over a fixed group of ranks, one thread per rank (one rank per engine
// device). One interface for every level (docs/design/comm.md): devices of one process
// (in_process.h), GPUs of one process (NCCL, or a sum on one GPU), the ranks of an MPI job (mpi.h,
// or NCCL across ranks on GPUs); MakeCollectives (make_collectives.h) builds them from the
// devices and the process group. Every rank calls each collective in the same order with the
// same count.
class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int size() const = 0;
  // Replaces data[0, count) on every rank with its sum over all ranks, bit-identical on every
  // rank (summed in rank order, except across GPUs, where NCCL chooses the order). `context`
  // says where data lives: nullptr for host memory, summed when the call returns; for GPU
  // memory the rank's CUDA context, on whose stream the sum is ordered (after what was issued
  // there before, before what is issued after). Throws crossbow::Error, with the library's error
  // text, when the ranks do not all arrive within `timeout`, the reduction fails or does not
  // finish in time, or the group was aborted.
  virtual void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                            std::chrono::milliseconds timeout) = 0;
  // Makes every pending and later collective throw `reason`: a rank that failed calls it so
  // that the others are not left waiting for it.
  virtual void Abort(const std::string& reason) = 0;
};

}  // namespace crossbow
