#pragma once

#include <cstdint>
#include <string>

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {

// SMA (docs/design/engine.md, "Synchronisers"): c_j = alpha (s_j - z) against the snapshot s_j
// taken before the learner's step, w_j -= c_j, and z moves by sum_j c_j with Polyak or Nesterov
// momentum mu_z, every `period` iterations. EASGD is the same update without central momentum
// (easgd.cc).
class SMA : public Synchroniser {
 public:
  // `type`: polyak or nesterov (the option table checks the values).
  SMA(double alpha, double central_momentum, const std::string& type, SyncPeriod period);
  bool SynchronisesAt(int64_t t) const override { return period_.At(t); }
  void Learner(const LearnerTurn& turn) const override;
  void Device(const DeviceTurn& turn) const override;
  bool RestartsOnDrop() const override { return true; }
  // Polyak momentum reads z - z_prev; Nesterov keeps its velocity u instead.
  std::string central_name() const override { return nesterov_ ? "z_velocity" : "z_prev"; }
  bool central_starts_at_z() const override { return !nesterov_; }

 private:
  float alpha_, mu_;
  bool nesterov_;
  SyncPeriod period_;
};

// SMA's kernels (sma.cc on the CPU, sma.cu on a GPU). Over a learner's blobs they are one
// fused pass on a GPU (a launch over the segment table).

// c[e] = alpha (w[e] - z[e]) over every segment e of w: learner j's correction.
struct SmaCorrection {
  static constexpr const char* kName = "SmaCorrection";
  SegmentTable* w;
  const float* z;
  float alpha;
  float* c;
};
// w[e] -= c[e] over every segment e of w.
struct SmaApplyCorrection {
  static constexpr const char* kName = "SmaApplyCorrection";
  const float* c;
  SegmentTable* w;
};
// The Polyak central update over n floats: z' = z + sum_c + mu (z - z_prev); z_prev = z; z = z'.
struct SmaPolyakUpdate {
  static constexpr const char* kName = "SmaPolyakUpdate";
  const float* sum_c;
  float mu;
  float* z;
  float* z_prev;
  int64_t n;
};

// The CPU loops over flat buffers (branch-free over restrict pointers, so that they vectorise).
namespace sma {
// c = alpha (w - z).
void Correction(const float* w, const float* z, float alpha, float* c, int64_t n);
// w -= c.
void ApplyCorrection(const float* c, float* w, int64_t n);
// z' = z + sum_c + mu (z - z_prev); z_prev = z; z = z'.
void PolyakUpdate(const float* sum_c, float mu, float* z, float* z_prev, int64_t n);
}  // namespace sma

}  // namespace crossbow
