// Collectives between distinct GPUs of one process: one communicator per GPU (ncclCommInitAll),
// and per collective one ncclAllReduce per rank, issued together by the last rank to arrive
// inside ncclGroupStart/End (one thread issuing for every GPU cannot deadlock). Each rank then
// waits for its part by polling an event, so that an NCCL failure (ncclCommGetAsyncError) or a
// reduction that never finishes ends in an error and ncclCommAbort, never in a hang.
#include <nccl.h>

#include <mutex>
#include <thread>
#include <vector>

#include "crossbow/comm/gpu_collectives.h"
#include "crossbow/comm/rendezvous.h"
#include "crossbow/core/check_cuda.h"
#include "crossbow/core/cuda_stream.h"

namespace crossbow {
namespace {

void CheckNccl(ncclResult_t result, const char* call, const std::string& context,
               ncclComm_t comm = nullptr) {
  if (result == ncclSuccess) return;
  const char* last = ncclGetLastError(comm);  // comm may be null: the last error anywhere
  CROSSBOW_FAIL(context, ": NCCL error '", ncclGetErrorString(result), "' in ", call,
                last && *last ? detail::Concat(" (", last, ")") : std::string());
}

std::string GpuList(const std::vector<int>& gpus) {
  std::string out;
  for (int g : gpus) out += (out.empty() ? "cuda:" : ",cuda:") + std::to_string(g);
  return out;
}

class NcclCollectives final : public Collectives {
 public:
  explicit NcclCollectives(const std::vector<int>& gpus)
      : gpus_(gpus),
        rendezvous_(static_cast<int>(gpus.size())),
        comms_(gpus.size(), nullptr),
        buffers_(gpus.size()),
        streams_(gpus.size()),
        done_(gpus.size()) {
    CheckNccl(ncclCommInitAll(comms_.data(), size(), gpus_.data()), "ncclCommInitAll",
              "creating NCCL communicators over " + GpuList(gpus_));
    live_ = true;
    for (int r = 0; r < size(); ++r) {
      CUDA_CHECK(cudaSetDevice(gpus_[r]), "NCCL collectives");
      CUDA_CHECK(cudaEventCreateWithFlags(&done_[r], cudaEventDisableTiming));
    }
  }

  ~NcclCollectives() override {
    {
      std::lock_guard<std::mutex> lock(comms_mutex_);
      if (live_) {
        for (ncclComm_t c : comms_) ncclCommDestroy(c);
      }
      live_ = false;
    }
    for (int r = 0; r < size(); ++r) {
      cudaSetDevice(gpus_[r]);
      cudaEventDestroy(done_[r]);
    }
  }

  int size() const override { return static_cast<int>(gpus_.size()); }

  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    std::chrono::milliseconds timeout) override {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    const cudaStream_t stream = cuda::StreamOf(context);
    rendezvous_.Run(
        rank, timeout,
        [&](bool first) {
          AgreeOnCount(first, rank, count, &count_);
          buffers_[rank] = data;
          streams_[rank] = stream;
        },
        [&] { IssueAll(count); },
        [&] {
          CUDA_CHECK(cudaEventRecord(done_[rank], stream), "NCCL all-reduce on cuda:", gpus_[rank]);
        });
    WaitForCompletion(rank, count, deadline);
  }

  void Abort(const std::string& reason) override {
    rendezvous_.Abort(reason);
    AbortComms();
  }

 private:
  void IssueAll(size_t count) {
    std::lock_guard<std::mutex> lock(comms_mutex_);
    CROSSBOW_ENFORCE(live_, "NCCL communicators were aborted");
    const std::string what =
        detail::Concat("NCCL all-reduce of ", count, " floats over ", GpuList(gpus_));
    int current = 0;  // NCCL may switch devices; the calling thread goes on with its own
    CUDA_CHECK(cudaGetDevice(&current), what);
    CheckNccl(ncclGroupStart(), "ncclGroupStart", what);
    for (int r = 0; r < size(); ++r) {
      const ncclResult_t result = ncclAllReduce(buffers_[r], buffers_[r], count, ncclFloat, ncclSum,
                                                comms_[r], streams_[r]);
      if (result != ncclSuccess) {
        ncclGroupEnd();
        CheckNccl(result, "ncclAllReduce", what, comms_[r]);
      }
    }
    CheckNccl(ncclGroupEnd(), "ncclGroupEnd", what);
    CUDA_CHECK(cudaSetDevice(current), what);
  }

  // Polls this rank's event; checks the communicator for asynchronous errors meanwhile.
  void WaitForCompletion(int rank, size_t count, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const cudaError_t state = cudaEventQuery(done_[rank]);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) {
        CUDA_CHECK(state, "NCCL all-reduce of ", count, " floats on cuda:", gpus_[rank]);
      }
      std::string failure;
      {
        std::lock_guard<std::mutex> lock(comms_mutex_);
        if (!live_) failure = "the NCCL communicators were aborted: " + rendezvous_.aborted();
        ncclResult_t async = ncclSuccess;
        if (live_ && ncclCommGetAsyncError(comms_[rank], &async) == ncclSuccess &&
            async != ncclSuccess && async != ncclInProgress) {
          failure = detail::Concat("NCCL error '", ncclGetErrorString(async), "' (",
                                   ncclGetLastError(comms_[rank]), ")");
        }
      }
      if (failure.empty() && std::chrono::steady_clock::now() > deadline) {
        failure = "it did not finish in time (a GPU or the link is stuck)";
      }
      if (!failure.empty()) {
        const std::string message = detail::Concat("NCCL all-reduce of ", count, " floats on rank ",
                                                   rank, " (cuda:", gpus_[rank], "): ", failure);
        rendezvous_.Abort(message);
        AbortComms();
        CROSSBOW_FAIL(message);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  void AbortComms() {
    std::lock_guard<std::mutex> lock(comms_mutex_);
    if (!live_) return;
    live_ = false;
    for (ncclComm_t c : comms_) ncclCommAbort(c);
  }

  const std::vector<int> gpus_;
  Rendezvous rendezvous_;
  std::mutex comms_mutex_;  // the communicators' lifetime (live_), against Abort
  bool live_ = false;
  std::vector<ncclComm_t> comms_;
  size_t count_ = 0;  // of the collective in progress; guarded by the rendezvous
  std::vector<float*> buffers_;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> done_;  // per rank: its part of the latest all-reduce
};

}  // namespace

std::unique_ptr<Collectives> MakeNcclCollectives(const std::vector<int>& gpus) {
  return std::make_unique<NcclCollectives>(gpus);
}

}  // namespace crossbow
