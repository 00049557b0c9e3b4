#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace crossbow {

// Collective operations over a fixed group of ranks (one rank per device). One interface,
// several backends: in-process (devices of one process, in_process.h) now, NCCL and MPI later.
// Every rank calls each collective in the same order with the same count.
class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int size() const = 0;
  // Replaces data[0, count) on every rank with its sum over all ranks, summed in rank order
  // (so every rank gets bit-identical results). Blocks until every rank has contributed;
  // throws crossbow::Error if that takes longer than `timeout` or the group was aborted.
  virtual void AllReduceSum(int rank, float* data, size_t count,
                            std::chrono::milliseconds timeout) = 0;
  // Makes every pending and later collective throw `reason`: a rank that failed calls it so
  // that the others are not left waiting for it.
  virtual void Abort(const std::string& reason) = 0;
};

}  // namespace crossbow
