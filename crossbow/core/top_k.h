#pragma once

#include <cstdint>

// Compiled by nvcc as well, so that the CUDA accuracy kernel applies the very same rule.
#if defined(__CUDACC__)
#define CROSSBOW_HOST_DEVICE __host__ __device__
#else
#define CROSSBOW_HOST_DEVICE
#endif

namespace crossbow {

// The one rule by which Crossbow scores a prediction (the Accuracy operator on CPU and CUDA,
// Learner::Evaluate, and so every evaluation and target accuracy): row[label] is a top-k hit
// when fewer than k classes other than the label score at least as much as it does. Ties
// therefore count against the label (a row of equal scores is a miss at k = 1), and a NaN
// anywhere in the row makes the row a miss, whatever k: a diverged model scores zero, never
// 100%. Scores are compared as they are; +-inf are ordinary values.
CROSSBOW_HOST_DEVICE inline bool IsTopKHit(const float* row, int64_t classes, int64_t label,
                                           int64_t k) {
  const float target = row[label];
  bool nan = target != target;
  int64_t at_least = 0;
  for (int64_t j = 0; j < classes; ++j) {
    const float s = row[j];
    nan = nan || s != s;
    at_least += static_cast<int64_t>(j != label && s >= target);
  }
  return !nan && at_least < k;
}

}  // namespace crossbow
