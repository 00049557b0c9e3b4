#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "crossbow/core/context.h"
#include "crossbow/engine/model_layout.h"

namespace crossbow {

// One blob of a learner as the flat synchronisation buffer sees it: blob[i] <-> flat[offset + i].
struct Segment {
  float* data = nullptr;  // on the learner's device
  int64_t offset = 0;
  int64_t numel = 0;
  bool operator==(const Segment& o) const {
    return data == o.data && offset == o.offset && numel == o.numel;
  }
};

// A learner's blobs of one kind (parameters, gradients, statistics). A GPU backend keeps a copy
// of the table in device memory, made again only when a blob moves (a new plan).
class SegmentTable {
 public:
  // `blob(name)` of every entry; returns whether anything moved.
  bool Refresh(const std::vector<ModelLayout::Entry>& entries,
               const std::function<Tensor*(const std::string&)>& blob);
  const std::vector<Segment>& segments() const { return segments_; }
  // Set by the backend that uploaded the table; cleared when it changes.
  std::shared_ptr<void> device_copy;

 private:
  std::vector<Segment> segments_;
};

// What the engine and the synchronisers need of one engine device to move and order data:
// gathers into and scatters out of the flat buffers [parameters | statistics | count], sums,
// the events that order that work, and memory. An algorithm's own arithmetic is not here:
// each synchroniser registers its kernels per device type (sync/sync_kernel.h).
//
// Learner-side calls run on the learner's thread and are ordered on its context (its stream);
// sync-side calls run on the device's sync thread and are ordered on the backend's own sync
// context. On a GPU, host counters order the *issue* of work and events its *execution*:
// WaitForAverage and WaitForContributions make one stream wait for another, never the host.
class SyncBackend {
 public:
  explicit SyncBackend(Device device) : device_(device) {}
  virtual ~SyncBackend() = default;
  Device device() const { return device_; }

  // Before `learners` learners use Contributed (slots 0..learners-1); on the caller's thread
  // while no learner runs.
  virtual void Prepare(int learners) {}
  // Zeroed bytes on the device (for the flat buffers).
  virtual std::shared_ptr<uint8_t> Allocate(size_t bytes) = 0;
  // A flat buffer of n floats on the device, zeroed.
  Tensor NewBuffer(int64_t n) { return ViewOf(Allocate(n * sizeof(float)), device_, 0, {n}); }

  // Learner side: `learner` is the learner's context.
  // The learner's next work runs after the latest update of the average model.
  virtual void WaitForAverage(ContextBase* learner) {}
  // flat[e] = scale * blob[e] over every segment e of `blobs` (one fused pass on a GPU).
  virtual void Gather(ContextBase* learner, SegmentTable& blobs, float scale, float* flat) = 0;
  // blob[e] = flat[e].
  virtual void Scatter(ContextBase* learner, const float* flat, SegmentTable& blobs) = 0;
  // x[0] = value.
  virtual void SetValue(ContextBase* learner, float* x, float value) = 0;
  // Whether every element of the blobs is finite; waits for the learner's work (a GPU's
  // answer comes back to the host).
  virtual bool AllFinite(ContextBase* learner, SegmentTable& blobs) = 0;
  // Learner `slot`'s contribution is written: the sync thread's next sum may read it.
  virtual void Contributed(ContextBase* learner, int slot) {}

  // Sync side.
  // The sync context's next work runs after the contributions of learners 0..learners-1.
  virtual void WaitForContributions(int learners) {}
  // The context that collectives over device memory order their work on (nullptr on the CPU).
  virtual ContextBase* sync_context() { return nullptr; }
  // sum = parts[0] + parts[1] + ..., in that order (deterministic).
  virtual void Sum(const std::vector<const float*>& parts, float* sum, int64_t n) = 0;
  // y = scale * x.
  virtual void ScaleInto(float scale, const float* x, float* y, int64_t n) = 0;
  // The work issued so far on the sync context is what the learners wait for next.
  virtual void AverageUpdated() {}

  // The host waits until the sync context's work is done.
  virtual void Finish() {}
  // Bytes this device can still give to more learners.
  virtual size_t FreeBytes() const = 0;

 protected:
  const Device device_;
};

// The backend of an engine device; the CUDA one is registered by the CUDA build.
std::unique_ptr<SyncBackend> MakeSyncBackend(Device device);
using SyncBackendFactory = std::function<std::unique_ptr<SyncBackend>(Device)>;
bool RegisterSyncBackend(DeviceType type, SyncBackendFactory factory);

}  // namespace crossbow
