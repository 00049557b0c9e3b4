#pragma once

// Mixup (Zhang et al. 2018) and CutMix (Yun et al. 2019) of a training batch, drawn from the
// batch's own random stream so that a mixed batch depends on the seed and its place in the run
// alone (not on the worker that made it, the learner that takes it, or a resume).
#include <cstdint>
#include <vector>

#include "crossbow/core/batch_source.h"
#include "data/rng.h"

namespace crossbow::data {

// A draw from Beta(alpha, alpha), alpha > 0, through two gamma draws in log space, so that a
// small alpha, whose gamma draws underflow, still gives values in [0, 1].
double SampleBeta(Rng* rng, double alpha);

// What one batch does: example i becomes lam of itself and 1 - lam of example perm[i]. Mixup
// blends whole images; CutMix pastes rows [top, bottom) x columns [left, right) of example
// perm[i] into example i, and lam is the share of the image left uncovered (timm's rand_bbox: a
// box of sides sqrt(1 - lam0) times the image's, centred uniformly, clipped by the image).
struct MixDraw {
  bool cutmix = false;
  double lam = 1;
  std::vector<int64_t> perm;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// Validates `mix` (alphas finite and >= 0), naming the flags.
void CheckMixOptions(const MixOptions& mix);

// The draw of batch `index` of `epoch` for `n` examples of `height` x `width`, seeded by
// (seed, epoch, index) on a stream apart from the records' augmentation. `mix` must be active.
MixDraw DrawMix(const MixOptions& mix, uint64_t seed, int64_t epoch, int64_t index, int64_t n,
                int64_t height, int64_t width);

// Mixes `n` plain NCHW examples of shape `example` (C, H, W) in place as `draw` says and writes
// each row's second label and lam.
void ApplyMix(const MixDraw& draw, const Shape& example, int64_t n, float* images,
              const int32_t* labels, int32_t* labels_b, float* lam);

}  // namespace crossbow::data
