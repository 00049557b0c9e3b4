// Joining and leaving the MPI job; the parts of ProcessGroup that do not depend on MPI.
#include <glog/logging.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "crossbow/comm/mpi.h"
#include "crossbow/comm/process_group.h"
#include "crossbow/core/enforce.h"

namespace crossbow {

int LaunchedWorldSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::max(1, std::atoi(value));
  }
  return 1;
}

int LaunchedLocalRank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK"}) {
    if (const char* value = std::getenv(name)) return std::max(0, std::atoi(value));
  }
  return 0;
}

std::vector<double> AllGatherDoubles(ProcessGroup& group, const std::vector<double>& values,
                                     std::chrono::milliseconds timeout) {
  const std::string bytes(reinterpret_cast<const char*>(values.data()),
                          values.size() * sizeof(double));
  std::vector<double> out;
  for (const std::string& part : group.AllGather(bytes, timeout)) {
    CROSSBOW_ENFORCE(part.size() == bytes.size(), "all-gather of ", values.size(),
                     " numbers: another rank sent ", part.size() / sizeof(double));
    const size_t at = out.size();
    out.resize(at + values.size());
    std::memcpy(out.data() + at, part.data(), part.size());
  }
  return out;
}

#ifdef CROSSBOW_WITH_MPI

namespace {

std::mutex world_mutex;
std::shared_ptr<MpiGroup> world;  // alive until exit: MPI may still use an abandoned buffer
bool ended = false;

void EndWorldAtExit() { EndWorld(0); }

}  // namespace

std::shared_ptr<ProcessGroup> JoinWorld(bool force) {
  std::lock_guard<std::mutex> lock(world_mutex);
  if (world) return world->size() > 1 ? world : nullptr;
  if (!force && LaunchedWorldSize() <= 1) return nullptr;
  CROSSBOW_ENFORCE(!ended, "the MPI job has ended in this process; it cannot be joined again");
  world = std::make_shared<MpiGroup>(InitMpi());
  std::atexit(EndWorldAtExit);
  if (world->rank() > 0 && FLAGS_minloglevel < google::GLOG_WARNING) {
    FLAGS_minloglevel = google::GLOG_WARNING;  // rank 0 tells the story; others warn and fail
  }
  LOG(INFO) << "MPI: rank " << world->rank() << " of " << world->size();
  return world->size() > 1 ? world : nullptr;
}

void EndWorld(int exit_code) {
  std::lock_guard<std::mutex> lock(world_mutex);
  if (!world || ended) return;
  ended = true;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // A collective given up on leaves other ranks waiting, and MPI_Finalize would wait for them.
  if (exit_code == 0 && world->broken()) exit_code = 1;
  if (exit_code != 0) {
    LOG(ERROR) << "rank " << world->rank() << " ends the MPI job (exit code " << exit_code << ")";
    google::FlushLogFiles(google::GLOG_INFO);
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  }
  MPI_Finalize();
}

#else

std::shared_ptr<ProcessGroup> JoinWorld(bool force) {
  CROSSBOW_ENFORCE(
      !force && LaunchedWorldSize() <= 1, "mpirun started ", LaunchedWorldSize(),
      " ranks, but this build of Crossbow has no MPI (configure with -DCROSSBOW_MPI=ON ",
      "after installing libopenmpi-dev)");
  return nullptr;
}

void EndWorld(int) {}

#endif

}  // namespace crossbow
