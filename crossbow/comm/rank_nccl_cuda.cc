// NCCL across the ranks of an MPI job, one GPU per rank (CROSSBOW_WITH_NCCL: CUDA, MPI and NCCL).
#include <memory>

#include "crossbow/comm/gpu_collectives.h"
#include "crossbow/core/enforce.h"

#ifdef CROSSBOW_WITH_NCCL

#include <mutex>
#include <string>
#include <thread>

#include "crossbow/comm/nccl_bootstrap.h"
#include "crossbow/core/check_cuda.h"
#include "crossbow/core/cuda_stream.h"

namespace crossbow {
namespace {

// This rank's GPU among every rank's, each MPI rank driving one GPU. An all-reduce waits for its
// completion event by polling, checking the communicator for asynchronous errors, so that a dead or
// stuck rank ends in an error and ncclCommAbort, not in a hang. NCCL's reduction gives every rank
// the same bits.
class RankNcclCollectives final : public Collectives {
 public:
  RankNcclCollectives(ProcessGroup& group, Device gpu, std::chrono::milliseconds timeout)
      : comm_(group, gpu.index, timeout), rank_(group.rank()), gpu_(gpu.index) {
    CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "rank ", rank_);
  }
  ~RankNcclCollectives() override { cudaEventDestroy(done_); }

  int size() const override { return 1; }

  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const cudaStream_t stream = cuda::StreamOf(context);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      CROSSBOW_ENFORCE(aborted_.empty(), Describe(count), ": aborted: ", aborted_);
      comm_.AllReduceSum(data, count, stream);
    }
    CUDA_CHECK(cudaEventRecord(done_, stream), "rank ", rank_);
    for (;;) {
      const cudaError_t state = cudaEventQuery(done_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) CUDA_CHECK(state, Describe(count));
      std::string failure;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ncclResult_t async = ncclSuccess;
        if (!aborted_.empty()) {
          failure = "aborted: " + aborted_;
        } else if (ncclCommGetAsyncError(comm_.get(), &async) == ncclSuccess &&
                   async != ncclSuccess && async != ncclInProgress) {
          failure = detail::Concat("NCCL error '", ncclGetErrorString(async), "' (",
                                   ncclGetLastError(comm_.get()), ")");
        }
      }
      if (failure.empty() && std::chrono::steady_clock::now() > deadline) {
        failure = "it did not finish in time: another rank died, hangs or stopped training";
      }
      if (!failure.empty()) {
        Abort(failure);
        CROSSBOW_FAIL(Describe(count), ": ", failure);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  // From any thread: the engine aborts when a learner fails.
  void Abort(const std::string& reason) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!aborted_.empty()) return;
    aborted_ = reason;
    comm_.Abort();
  }

 private:
  std::string Describe(size_t count) const {
    return detail::Concat("NCCL all-reduce of ", count, " floats across ranks on rank ", rank_,
                          " (cuda:", gpu_, ")");
  }

  std::mutex mutex_;  // comm_ and aborted_, against Abort from another thread
  NcclCommunicator comm_;
  int rank_, gpu_;
  cudaEvent_t done_ = nullptr;
  std::string aborted_;
};

}  // namespace

std::unique_ptr<Collectives> MakeRankNcclCollectives(ProcessGroup& group, Device gpu,
                                                     std::chrono::milliseconds timeout) {
  return std::make_unique<RankNcclCollectives>(group, gpu, timeout);
}

}  // namespace crossbow

#else

namespace crossbow {

std::unique_ptr<Collectives> MakeRankNcclCollectives(ProcessGroup&, Device,
                                                     std::chrono::milliseconds) {
  throw ValueError(
      "GPUs across MPI ranks need a Crossbow built with CUDA, MPI and NCCL (configure with "
      "-DCROSSBOW_CUDA=ON after installing libopenmpi-dev)");
}

}  // namespace crossbow

#endif  // CROSSBOW_WITH_NCCL
