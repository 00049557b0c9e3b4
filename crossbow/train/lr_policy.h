#pragma once

#include <string>
#include <vector>

namespace crossbow {

// Caffe's learning-rate policies, as functions of a training position t. The trainer measures
// t in epochs (fractional: images seen / epoch size), so that a schedule does not change with
// the number of learners; the policies themselves do not care about the unit.
//   fixed      base_lr
//   step       base_lr * gamma ^ floor(t / step_size)
//   multistep  base_lr * gamma ^ (number of steps <= t)
//   exp        base_lr * gamma ^ t
//   inv        base_lr * (1 + gamma * t) ^ -power
//   poly       base_lr * (1 - t / max) ^ power, 0 from max on
//   cosine     e + (base_lr - e) (1 + cos(pi (t - c) / (max - c))) / 2 from c = warmup on, e
//              from max on, e = end * base_lr (SGDR without restarts, as timm's and
//              transformers' cosine with warm-up)
//   flatcos    the same from c = max(warmup, flat * max), base_lr before (fastai's
//              fit_flat_cos: flat its pct_start, end 1 / its div_final)
//   onecycle   a cosine from warmup_start * base_lr up to base_lr over the warm-up, then one
//              down to e at max (fastai's fit_one_cycle: warmup its pct_start * max,
//              warmup_start 1 / its div, end 1 / its div_final)
// A linear warm-up composes with any of them but onecycle, whose warm-up is its own: for
// t < warmup the rate is scaled by a factor that grows linearly from warmup_start to 1 (Goyal et
// al. 2017). poly, cosine, flatcos and onecycle end at max, which must come after the warm-up.
// A momentum cycle (onecycle alone; fastai's moms) moves the optimiser's momentum through
// cosines of the same phases: momentum[0] at 0, momentum[1] at the end of the warm-up,
// momentum[2] at max.
struct LrPolicyOptions {
  std::string policy = "fixed";
  double base_lr = 0.1;
  double gamma = 0.1;
  double power = 1.0;
  double step_size = 0;                  // step
  std::vector<double> steps;             // multistep, ascending
  double max = 0;                        // poly, cosine, flatcos: the end (the trainer's epochs)
  double flat = 0.75;                    // flatcos: the share of [0, max] at base_lr
  double end = 0;                        // cosine, flatcos, onecycle: the last rate / base_lr
  std::vector<double> momentum;          // onecycle: the momentum cycle (empty: none)
  double warmup = 0;                     // 0: no warm-up
  double warmup_start = 0.1;             // warm-up's first factor
  std::string learner_scaling = "none";  // LearnerScale's rule
};

// The policies, as --lr-policy names them.
std::vector<std::string> LrPolicyNames();
// Whether the policy ends at max (poly, cosine, flatcos), which the trainer sets from epochs.
bool LrPolicyEnds(const std::string& policy);

// The factor of every learner's rate for a job of `learners` learners (all devices and ranks),
// by --lr-learner-scaling: none (1), sqrt (sqrt(learners)) or linear (learners); auto is sqrt
// where each learner steps on its own batch and none where the learners are one model stepping
// on the whole iteration's batch (`one_model`: S-SGD, SGD), whose rate is the whole batch's.
// The learners share an epoch's images, so each takes 1/learners of its steps; sqrt keeps the
// square-root rule on the images of an iteration (docs/design/engine.md, "The small-batch
// rule").
std::vector<std::string> LearnerScalingNames();
double LearnerScale(const std::string& scaling, int learners, bool one_model);

class LrPolicy {
 public:
  // Throws crossbow::ValueError for an unknown policy and one without what it needs.
  explicit LrPolicy(LrPolicyOptions options);
  double At(double t) const;
  // The momentum of the cycle at t; NaN without a cycle.
  double MomentumAt(double t) const;
  const LrPolicyOptions& options() const { return options_; }

 private:
  // As LrPolicyNames().
  enum class Kind { kFixed, kStep, kMultiStep, kExp, kInv, kPoly, kCosine, kFlatCos, kOneCycle };
  double Base(double t) const;
  double Cycle(double t, double first, double peak, double last) const;
  double CosineStart() const;

  LrPolicyOptions options_;
  Kind kind_;
};

}  // namespace crossbow
