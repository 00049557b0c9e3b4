#include "crossbow/train/lr_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "crossbow/core/enforce.h"
#include "crossbow/core/names.h"

namespace crossbow {
std::vector<std::string> LrPolicyNames() {
  return {"fixed", "step", "multistep", "exp", "inv", "poly", "cosine", "flatcos", "onecycle"};
}

bool LrPolicyEnds(const std::string& policy) {
  return policy == "poly" || policy == "cosine" || policy == "flatcos" || policy == "onecycle";
}

namespace {

// From `start` at p = 0 to `end` at p = 1 along half a cosine, written as fastai's sched_cos.
double CosineFrom(double start, double end, double p) {
  return start + (1 + std::cos(M_PI * (1 - p))) * (end - start) / 2;
}

}  // namespace

std::vector<std::string> LearnerScalingNames() { return {"auto", "none", "sqrt", "linear"}; }

double LearnerScale(const std::string& scaling, int learners, bool one_model) {
  CROSSBOW_ENFORCE_VALUE(learners >= 1, "a job has at least one learner, got ", learners);
  if (scaling == "auto") return LearnerScale(one_model ? "none" : "sqrt", learners, one_model);
  if (scaling == "sqrt") return std::sqrt(static_cast<double>(learners));
  if (scaling == "linear") return learners;
  const std::vector<std::string> names = LearnerScalingNames();
  CROSSBOW_ENFORCE_VALUE(scaling == "none", "unknown learner scaling '", scaling, "'; expected ",
                         JoinNames(names), DidYouMean(scaling, names));
  return 1;
}

// The values of single options (base_lr, gamma, warmup ...) are the option table's to check
// (trainer_options.cc); what is checked here is what a policy needs of them together.
LrPolicy::LrPolicy(LrPolicyOptions options) : options_(std::move(options)) {
  const LrPolicyOptions& o = options_;
  const std::vector<std::string> names = LrPolicyNames();
  const auto it = std::find(names.begin(), names.end(), o.policy);
  CROSSBOW_ENFORCE_VALUE(it != names.end(), "unknown lr policy '", o.policy, "'; expected ",
                         JoinNames(names), DidYouMean(o.policy, names));
  kind_ = static_cast<Kind>(it - names.begin());
  CROSSBOW_ENFORCE_VALUE(kind_ != Kind::kStep || o.step_size > 0,
                         "lr policy 'step' needs step_size (--step-size) > 0, got ", o.step_size);
  CROSSBOW_ENFORCE_VALUE(kind_ != Kind::kMultiStep || !o.steps.empty(),
                         "lr policy 'multistep' needs at least one step (--steps)");
  CROSSBOW_ENFORCE_VALUE(std::is_sorted(o.steps.begin(), o.steps.end()),
                         "lr policy steps (--steps) must be ascending");
  CROSSBOW_ENFORCE_VALUE(o.momentum.empty() || (kind_ == Kind::kOneCycle && o.momentum.size() == 3),
                         "a momentum cycle (--momentum-cycle) takes three momenta (start, peak "
                         "rate, end) with lr policy onecycle, got ",
                         o.momentum.size(), " with lr policy '", o.policy, "'");
  if (!LrPolicyEnds(o.policy)) return;
  CROSSBOW_ENFORCE_VALUE(o.max > 0, "lr policy '", o.policy,
                         "' needs max > 0 (the end of training), got ", o.max);
  CROSSBOW_ENFORCE_VALUE(o.warmup < o.max, "lr policy '", o.policy, "' (--lr-policy) ends at ",
                         o.max, " (--epochs), before its warm-up (--warmup ", o.warmup,
                         ") is over");
}

// Where the cosine starts: after the warm-up, and for flatcos after its flat share.
double LrPolicy::CosineStart() const {
  const LrPolicyOptions& o = options_;
  return kind_ == Kind::kFlatCos ? std::max(o.warmup, o.flat * o.max) : o.warmup;
}

double LrPolicy::Base(double t) const {
  const LrPolicyOptions& o = options_;
  switch (kind_) {
    case Kind::kFixed:
      return o.base_lr;
    case Kind::kStep:
      return o.base_lr * std::pow(o.gamma, std::floor(t / o.step_size));
    case Kind::kMultiStep: {
      auto passed = std::upper_bound(o.steps.begin(), o.steps.end(), t) - o.steps.begin();
      return o.base_lr * std::pow(o.gamma, static_cast<double>(passed));
    }
    case Kind::kExp:
      return o.base_lr * std::pow(o.gamma, t);
    case Kind::kInv:
      return o.base_lr * std::pow(1 + o.gamma * t, -o.power);
    case Kind::kPoly:
      return t >= o.max ? 0.0 : o.base_lr * std::pow(1 - t / o.max, o.power);
    case Kind::kCosine:
    case Kind::kFlatCos: {
      const double start = CosineStart(), last = o.end * o.base_lr;
      if (t >= o.max) return last;
      if (t <= start) return o.base_lr;
      return last + (o.base_lr - last) * 0.5 * (1 + std::cos(M_PI * (t - start) / (o.max - start)));
    }
    case Kind::kOneCycle:
      return Cycle(t, o.warmup_start * o.base_lr, o.base_lr, o.end * o.base_lr);
  }
  return o.base_lr;
}

// fastai's combined_cos: up from `first` over the warm-up, then down to `last` at max.
double LrPolicy::Cycle(double t, double first, double peak, double last) const {
  const LrPolicyOptions& o = options_;
  if (t < o.warmup) return CosineFrom(first, peak, t / o.warmup);
  return CosineFrom(peak, last, std::min(1.0, (t - o.warmup) / (o.max - o.warmup)));
}

double LrPolicy::MomentumAt(double t) const {
  const std::vector<double>& m = options_.momentum;
  return m.empty() ? NAN : Cycle(t, m[0], m[1], m[2]);
}

double LrPolicy::At(double t) const {
  const double lr = Base(t);
  const LrPolicyOptions& o = options_;
  if (t >= o.warmup || kind_ == Kind::kOneCycle) return lr;
  return lr * (o.warmup_start + (1 - o.warmup_start) * t / o.warmup);
}

}  // namespace crossbow
