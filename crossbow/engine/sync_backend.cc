#include "crossbow/engine/sync_backend.h"

#include <algorithm>
#include <map>

#include "crossbow/core/host_memory.h"
#include "crossbow/engine/flat_ops.h"

namespace crossbow {
namespace {

// The CPU: the flat_ops.h kernels on the calling thread, one call per blob; nothing to order.
class CPUSyncBackend final : public SyncBackend {
 public:
  CPUSyncBackend() : SyncBackend(Device{}) {}
  std::shared_ptr<uint8_t> Allocate(size_t bytes) override {
    auto p = AllocateAligned(bytes);
    std::fill_n(p.get(), bytes, uint8_t{0});
    return p;
  }
  void Gather(ContextBase*, SegmentTable& blobs, float scale, float* flat) override {
    for (const Segment& s : blobs.segments()) {
      std::copy_n(s.data, s.numel, flat + s.offset);
      if (scale != 1.f) flat::Scale(scale, flat + s.offset, s.numel);
    }
  }
  void Scatter(ContextBase*, const float* flat, SegmentTable& blobs) override {
    for (const Segment& s : blobs.segments()) std::copy_n(flat + s.offset, s.numel, s.data);
  }
  void SetValue(ContextBase*, float* x, float value) override { *x = value; }
  bool AllFinite(ContextBase*, SegmentTable& blobs) override {
    for (const Segment& s : blobs.segments()) {
      if (!flat::AllFinite(s.data, s.numel)) return false;
    }
    return true;
  }
  void Sum(const std::vector<const float*>& parts, float* sum, int64_t n) override {
    std::fill_n(sum, n, 0.f);
    for (const float* part : parts) flat::Accumulate(part, sum, n);
  }
  void ScaleInto(float scale, const float* x, float* y, int64_t n) override {
    std::copy_n(x, n, y);
    flat::Scale(scale, y, n);
  }
  size_t FreeBytes() const override { return AvailableHostMemoryBytes(); }
};

std::map<DeviceType, SyncBackendFactory>& Factories() {
  static std::map<DeviceType, SyncBackendFactory> factories;
  return factories;
}

}  // namespace

bool SegmentTable::Refresh(const std::vector<ModelLayout::Entry>& entries,
                           const std::function<Tensor*(const std::string&)>& blob) {
  bool moved = segments_.size() != entries.size();
  segments_.resize(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    Tensor* t = blob(entries[i].name);
    const Segment s{t->mutable_data<float>(), entries[i].offset, entries[i].numel};
    if (!(segments_[i] == s)) {
      segments_[i] = s;
      moved = true;
    }
  }
  if (moved) device_copy.reset();
  return moved;
}

bool RegisterSyncBackend(DeviceType type, SyncBackendFactory factory) {
  Factories()[type] = std::move(factory);
  return true;
}

std::unique_ptr<SyncBackend> MakeSyncBackend(Device device) {
  if (device.type == DeviceType::kCPU) return std::make_unique<CPUSyncBackend>();
  auto it = Factories().find(device.type);
  CROSSBOW_ENFORCE_VALUE(it != Factories().end(), "device ", device.ToString(),
                         ": this Crossbow was built without ", DeviceName(device.type),
                         " support (configure with -DCROSSBOW_CUDA=ON)");
  return it->second(device);
}

}  // namespace crossbow
