#pragma once

// The MPI process group; compiled only where CMake found MPI (CROSSBOW_WITH_MPI).
#ifdef CROSSBOW_WITH_MPI

#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crossbow/comm/process_group.h"

namespace crossbow {

// A ProcessGroup over an MPI communicator (docs/design/comm.md). MPI has no timed collectives:
// each one is non-blocking and polled with MPI_Test until it completes, the group is aborted or
// the deadline passes, which throws crossbow::Error naming the collective, the rank and the
// time. After that the group is broken: every later call throws, and the process must end the
// job with EndMpi(code != 0) (MPI_Abort) rather than finalise.
//
// AllReduceSum is deterministic and bit-identical on every rank, with the bandwidth of a ring
// all-reduce: the buffer is cut into one chunk per rank; an all-to-all gives rank r every
// rank's copy of chunk r, which it sums in rank order (0 + 1 + 2 ...: the order in which the
// in-process collectives sum devices); an all-gather hands the summed chunks to everyone.
class MpiGroup final : public ProcessGroup {
 public:
  // Works on two duplicates of `comm`: one for AllReduceSum (called by the engine's sync
  // threads), one for the other collectives (the trainer's thread), so that the two streams of
  // collectives never interleave differently on different ranks.
  explicit MpiGroup(MPI_Comm comm);
  ~MpiGroup() override;

  int size() const override { return size_; }
  int rank() const override { return rank_; }
  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    std::chrono::milliseconds timeout) override;
  void Abort(const std::string& reason) override;
  std::vector<std::string> AllGather(const std::string& bytes,
                                     std::chrono::milliseconds timeout) override;
  std::vector<std::string> Gather(const std::string& bytes, int root,
                                  std::chrono::milliseconds timeout) override;

  // Aborted, or a collective was given up on: the job cannot go on.
  bool broken();
  // The communicator of AllReduceSum (e.g. to bootstrap NCCL over it).
  MPI_Comm data_comm() const { return data_; }

 private:
  struct Buffers;  // what a collective in flight reads and writes
  std::vector<std::string> Collect(const std::string& bytes, int root, const char* what,
                                   std::chrono::milliseconds timeout);
  // Polls `request` until it completes; throws (and breaks the group) on abort or timeout.
  void Wait(MPI_Request* request, std::chrono::steady_clock::time_point deadline,
            std::chrono::milliseconds timeout, const char* what, std::shared_ptr<Buffers> buffers);
  void ThrowIfBroken(const char* what);

  MPI_Comm data_ = MPI_COMM_NULL, control_ = MPI_COMM_NULL;
  int size_ = 1, rank_ = 0;
  std::mutex mutex_;    // guards reason_ and abandoned_
  std::string reason_;  // why the group is aborted or broken; empty while it works
  // AllReduceSum's buffers, reused (only the engine's one sync stream calls it).
  std::vector<float> chunks_, result_;
  std::vector<int> counts_, offsets_, mine_, at_;
  // Buffers of collectives given up on: MPI may still write into them, so they are never freed.
  std::vector<std::shared_ptr<Buffers>> abandoned_;
};

// Initialises MPI once (MPI_THREAD_SERIALIZED at least: every MPI call of this process is made
// under one mutex) and returns MPI_COMM_WORLD.
MPI_Comm InitMpi();

}  // namespace crossbow

#endif  // CROSSBOW_WITH_MPI
