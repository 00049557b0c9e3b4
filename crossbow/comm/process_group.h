#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "crossbow/comm/collectives.h"

namespace crossbow {

// The processes of one training job (MPI ranks; comm/mpi.h), one rank each. As Collectives it
// all-reduces the engine's synchronisation buffers in host memory (the context is nullptr; the
// `rank` argument is this process's rank); the rest is for what the ranks must agree on outside
// the iterations: start-up checks, per-iteration counters, evaluation results, checkpoints.
// Those calls come from one thread.
class ProcessGroup : public Collectives {
 public:
  virtual int rank() const = 0;
  // Every rank's bytes, in rank order, on every rank.
  virtual std::vector<std::string> AllGather(const std::string& bytes,
                                             std::chrono::milliseconds timeout) = 0;
  // Every rank's bytes, in rank order, on rank `root`; elsewhere an empty vector.
  virtual std::vector<std::string> Gather(const std::string& bytes, int root,
                                          std::chrono::milliseconds timeout) = 0;
};

// Every rank's `values`, rank after rank (each rank sends as many).
std::vector<double> AllGatherDoubles(ProcessGroup& group, const std::vector<double>& values,
                                     std::chrono::milliseconds timeout);

// The process group this process belongs to: the MPI world when it was started by mpirun (or
// `force`) with more than one rank, else nullptr. MPI is initialised here, the first time, and
// finalised at exit. Throws where this build has no MPI but mpirun started several ranks.
std::shared_ptr<ProcessGroup> JoinWorld(bool force = false);

// Ends this process's part in the MPI job, if it joined one: MPI_Finalize after success
// (exit_code 0), MPI_Abort(exit_code) after a failure or once a collective was given up on, so
// that no other rank is left waiting. Idempotent; also run at exit.
void EndWorld(int exit_code);

// The ranks mpirun started (OMPI_COMM_WORLD_SIZE, PMI_SIZE), without initialising MPI; 1 when
// none.
int LaunchedWorldSize();
// This rank's place among the ranks mpirun started on its machine (OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID); 0 when none.
int LaunchedLocalRank();

}  // namespace crossbow
