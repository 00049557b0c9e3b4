// Collectives between logical devices that share one GPU: the last rank to arrive sums every
// rank's buffer in rank order, in place, on its own stream after the others' work; every rank's
// stream then waits for that sum. Nothing waits on the host for the GPU.
#include <vector>

#include "crossbow/comm/gpu_collectives.h"
#include "crossbow/comm/reduce_kernels.h"
#include "crossbow/comm/rendezvous.h"
#include "crossbow/core/check_cuda.h"
#include "crossbow/core/cuda_stream.h"

namespace crossbow {
namespace {

class PeerCopyCollectives final : public Collectives {
 public:
  PeerCopyCollectives(int gpu, int ranks)
      : gpu_(gpu), rendezvous_(ranks), buffers_(ranks), ready_(ranks) {
    CROSSBOW_ENFORCE_VALUE(ranks <= comm::cuda::kMaxSumBuffers, ranks,
                           " logical devices on cuda:", gpu, "; at most ",
                           comm::cuda::kMaxSumBuffers, " are supported");
    CUDA_CHECK(cudaSetDevice(gpu_), "collectives on cuda:", gpu_);
    for (auto& e : ready_) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&summed_, cudaEventDisableTiming));
  }
  ~PeerCopyCollectives() override {
    cudaSetDevice(gpu_);
    for (auto e : ready_) cudaEventDestroy(e);
    cudaEventDestroy(summed_);
  }

  int size() const override { return rendezvous_.size(); }

  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    std::chrono::milliseconds timeout) override {
    if (size() == 1) return;
    const cudaStream_t stream = cuda::StreamOf(context);
    rendezvous_.Run(
        rank, timeout,
        [&](bool first) {
          AgreeOnCount(first, rank, count, &count_);
          buffers_[rank] = data;
          CUDA_CHECK(cudaEventRecord(ready_[rank], stream), "all-reduce on cuda:", gpu_);
        },
        [&] {
          for (int r = 0; r < size(); ++r) {
            CUDA_CHECK(cudaStreamWaitEvent(stream, ready_[r], 0), "all-reduce on cuda:", gpu_);
          }
          comm::cuda::SumInPlace(buffers_, static_cast<int64_t>(count), stream);
          CUDA_CHECK(cudaEventRecord(summed_, stream), "all-reduce on cuda:", gpu_);
        },
        [&] { CUDA_CHECK(cudaStreamWaitEvent(stream, summed_, 0), "all-reduce on cuda:", gpu_); });
  }

  void Abort(const std::string& reason) override { rendezvous_.Abort(reason); }

 private:
  const int gpu_;
  Rendezvous rendezvous_;
  size_t count_ = 0;  // of the collective in progress; guarded by the rendezvous
  std::vector<float*> buffers_;
  std::vector<cudaEvent_t> ready_;  // per rank: its buffer is written
  cudaEvent_t summed_ = nullptr;
};

}  // namespace

std::unique_ptr<Collectives> MakePeerCopyCollectives(int gpu, int ranks) {
  return std::make_unique<PeerCopyCollectives>(gpu, ranks);
}

}  // namespace crossbow
