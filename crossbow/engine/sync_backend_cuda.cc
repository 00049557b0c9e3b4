// The sync backend on a GPU: fused kernels (flat_ops.cu) on the learners' streams and on a
// sync stream of the device's own, ordered by events (sync_backend.h).
#include "crossbow/engine/sync_backend_cuda.h"

#include <cstring>
#include <vector>

#include "crossbow/core/check_cuda.h"
#include "crossbow/core/context_cuda.h"
#include "crossbow/core/cuda_stream.h"
#include "crossbow/core/device_backend.h"

namespace crossbow {
namespace {

namespace kernels = flat::cuda;

// A segment table in device memory: the segments, then the chunks.
struct UploadedTable {
  std::shared_ptr<uint8_t> bytes;
  kernels::DeviceTable view;
};

static_assert(sizeof(Segment) == sizeof(kernels::TableSegment), "Segment and TableSegment differ");

std::vector<int64_t> Chunks(const std::vector<Segment>& segments) {
  std::vector<int64_t> chunks;
  for (size_t s = 0; s < segments.size(); ++s) {
    for (int64_t begin = 0; begin < segments[s].numel; begin += kernels::kChunk) {
      chunks.push_back(static_cast<int64_t>(s) << kernels::kChunkSegmentShift | begin);
    }
  }
  return chunks;
}

class CUDASyncBackend final : public SyncBackend {
 public:
  explicit CUDASyncBackend(Device device) : SyncBackend(device), sync_(device.index, /*seed=*/0) {
    sync_.BindThread();
    CUDA_CHECK(cudaEventCreateWithFlags(&average_ready_, cudaEventDisableTiming), Where());
  }
  ~CUDASyncBackend() override {
    cudaSetDevice(device_.index);
    cudaStreamSynchronize(sync_.stream());
    cudaEventDestroy(average_ready_);
    for (cudaEvent_t e : contributed_) cudaEventDestroy(e);
  }

  void Prepare(int learners) override {
    CUDA_CHECK(cudaSetDevice(device_.index), Where());
    while (static_cast<int>(contributed_.size()) < learners) {
      cudaEvent_t e = nullptr;
      CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), Where());
      contributed_.push_back(e);
    }
  }

  std::shared_ptr<uint8_t> Allocate(size_t bytes) override {
    sync_.BindThread();
    auto p = AllocateOn(device_, bytes);
    CUDA_CHECK(cudaMemsetAsync(p.get(), 0, bytes, sync_.stream()), Where());
    sync_.Synchronize();
    return p;
  }

  void WaitForAverage(ContextBase* learner) override {
    learner->BindThread();
    CUDA_CHECK(cudaStreamWaitEvent(cuda::StreamOf(learner), average_ready_, 0), Where());
  }
  void Gather(ContextBase* learner, SegmentTable& blobs, float scale, float* flat) override {
    kernels::Gather(DeviceTableOf(blobs, learner), scale, flat, cuda::StreamOf(learner));
  }
  void Scatter(ContextBase* learner, const float* flat, SegmentTable& blobs) override {
    kernels::Scatter(DeviceTableOf(blobs, learner), flat, cuda::StreamOf(learner));
  }
  void SetValue(ContextBase* learner, float* x, float value) override {
    kernels::SetValue(x, value, cuda::StreamOf(learner));
  }
  bool AllFinite(ContextBase* learner, SegmentTable& blobs) override {
    CUDAContext& context = cuda::CudaContextOf(learner);
    context.BindThread();
    const cudaStream_t stream = context.stream();
    // The learner's scratch, ordered by its stream after the work that used it: no allocation
    // per iteration, which on a full GPU would stop a learner that had everything it needed.
    int* flag = static_cast<int*>(context.Scratch(sizeof(int)));
    CUDA_CHECK(cudaMemsetAsync(flag, 0, sizeof(int), stream), Where());
    kernels::FlagNonFinite(DeviceTableOf(blobs, learner), flag, stream);
    int non_finite = 0;
    CUDA_CHECK(cudaMemcpyAsync(&non_finite, flag, sizeof(int), cudaMemcpyDeviceToHost, stream),
               Where());
    CUDA_CHECK(cudaStreamSynchronize(stream), Where());
    return non_finite == 0;
  }
  void Contributed(ContextBase* learner, int slot) override {
    CUDA_CHECK(cudaEventRecord(contributed_.at(slot), cuda::StreamOf(learner)), Where());
  }

  void WaitForContributions(int learners) override {
    sync_.BindThread();
    for (int j = 0; j < learners; ++j) {
      CUDA_CHECK(cudaStreamWaitEvent(sync_.stream(), contributed_.at(j), 0), Where());
    }
  }
  ContextBase* sync_context() override { return &sync_; }
  void Sum(const std::vector<const float*>& parts, float* sum, int64_t n) override {
    kernels::Sum(parts, sum, n, sync_.stream());
  }
  void ScaleInto(float scale, const float* x, float* y, int64_t n) override {
    kernels::ScaleInto(scale, x, y, n, sync_.stream());
  }
  void AverageUpdated() override {
    CUDA_CHECK(cudaEventRecord(average_ready_, sync_.stream()), Where());
  }

  void Finish() override { sync_.Synchronize(); }
  size_t FreeBytes() const override {
    return cuda::MemoryInfo(device_.index).first + cuda::AllocatorStats(device_.index).second;
  }

 private:
  std::string Where() const { return "synchronisation on " + device_.ToString(); }

  CUDAContext sync_;
  cudaEvent_t average_ready_ = nullptr;   // recorded after each update of z
  std::vector<cudaEvent_t> contributed_;  // per learner slot: its contribution is written
};

const bool registered = RegisterSyncBackend(
    DeviceType::kCUDA, [](Device device) { return std::make_unique<CUDASyncBackend>(device); });

}  // namespace

kernels::DeviceTable DeviceTableOf(SegmentTable& table, ContextBase* learner) {
  if (!table.device_copy) {
    const auto& segments = table.segments();
    const std::vector<int64_t> chunks = Chunks(segments);
    const size_t segment_bytes = segments.size() * sizeof(Segment);
    std::vector<uint8_t> host(segment_bytes + chunks.size() * sizeof(int64_t) + 1);
    std::memcpy(host.data(), segments.data(), segment_bytes);
    std::memcpy(host.data() + segment_bytes, chunks.data(), chunks.size() * sizeof(int64_t));
    auto uploaded = std::make_shared<UploadedTable>();
    learner->BindThread();
    uploaded->bytes = AllocateOn(learner->device(), host.size());
    learner->Copy(uploaded->bytes.get(), host.data(), host.size());
    learner->Synchronize();  // `host` goes away; happens only when blobs move
    uploaded->view.segments = reinterpret_cast<const kernels::TableSegment*>(uploaded->bytes.get());
    uploaded->view.chunks = reinterpret_cast<const int64_t*>(uploaded->bytes.get() + segment_bytes);
    uploaded->view.num_chunks = static_cast<int64_t>(chunks.size());
    table.device_copy = uploaded;
  }
  return static_cast<UploadedTable*>(table.device_copy.get())->view;
}

}  // namespace crossbow
