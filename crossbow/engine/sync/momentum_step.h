#pragma once

#include <cstdint>

#include "crossbow/engine/sync/synchroniser.h"

namespace crossbow {

// A momentum step of z towards d = scale x - shift z, with velocity u, over n floats:
//   u = mu u + d;  z += lr (nesterov ? d + mu u : u).
// SMA's Nesterov central update (x = the sum of the corrections; the defaults) and DiLoCo's
// outer step (x = the sum of the learners' weights, scale 1/N, shift 1) share it. A kernel of
// the synchronisers (sync_kernel.h): momentum_step.cc on the CPU, momentum_step.cu on a GPU.
struct MomentumStep {
  static constexpr const char* kName = "MomentumStep";
  const float* x = nullptr;
  float* z = nullptr;
  float* u = nullptr;
  int64_t n = 0;
  float scale = 1.f;
  float shift = 0.f;
  float lr = 1.f;
  float mu = 0.f;
  bool nesterov = false;

  // Over a device's sum (x), z and central buffer (u), their parameters.
  static MomentumStep OnCentral(const DeviceTurn& turn);
};

}  // namespace crossbow
