#include "crossbow/comm/nccl_bootstrap.h"

#ifdef CROSSBOW_WITH_NCCL

#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "crossbow/comm/device_collectives.h"
#include "crossbow/core/check_cuda.h"
#include "crossbow/core/cuda_stream.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

void Check(ncclResult_t result, int rank, const char* what) {
  CROSSBOW_ENFORCE(result == ncclSuccess, what, " on rank ", rank, ": ",
                   ncclGetErrorString(result));
}

}  // namespace

NcclCommunicator::NcclCommunicator(ProcessGroup& group, int device,
                                   std::chrono::milliseconds timeout)
    : rank_(group.rank()) {
  const cudaError_t set = cudaSetDevice(device);
  CROSSBOW_ENFORCE(set == cudaSuccess, "rank ", rank_, ": cannot use CUDA device ", device, ": ",
                   cudaGetErrorString(set));
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (rank_ == 0) Check(ncclGetUniqueId(&id), rank_, "ncclGetUniqueId");
  const std::string mine = rank_ == 0 ? std::string(id.internal, sizeof(id.internal)) : "";
  const std::string root = group.AllGather(mine, timeout)[0];
  CROSSBOW_ENFORCE(root.size() == sizeof(id.internal), "rank ", rank_, ": rank 0 sent an NCCL ",
                   "id of ", root.size(), " bytes, expected ", sizeof(id.internal));
  std::memcpy(id.internal, root.data(), root.size());
  Check(ncclCommInitRank(&comm_, group.size(), id, rank_), rank_, "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclCommunicator::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

void NcclCommunicator::AllReduceSum(float* data, size_t count, cudaStream_t stream) {
  Check(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream), rank_,
        "ncclAllReduce");
}

namespace {

// This rank's GPU among every rank's: the engine's device collectives when each MPI rank drives
// one GPU. An all-reduce waits for its completion event by polling, checking the communicator
// for asynchronous errors, so that a dead or stuck rank ends in an error and ncclCommAbort, not
// in a hang. NCCL's reduction gives every rank the same bits.
class RankNcclCollectives final : public DeviceCollectives {
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

const bool registered = RegisterRankDeviceCollectives(
    [](ProcessGroup& group, Device gpu, std::chrono::milliseconds timeout) {
      return std::make_unique<RankNcclCollectives>(group, gpu, timeout);
    });

}  // namespace

}  // namespace crossbow

#endif  // CROSSBOW_WITH_NCCL
