#include "crossbow/engine/lr_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

constexpr const char* kPolicies = "fixed, step, multistep, exp, inv, poly";

}  // namespace

LrPolicy::LrPolicy(LrPolicyOptions options) : options_(std::move(options)) {
  const LrPolicyOptions& o = options_;
  const std::string& name = o.policy;
  if (name == "fixed") {
    kind_ = Kind::kFixed;
  } else if (name == "step") {
    kind_ = Kind::kStep;
  } else if (name == "multistep") {
    kind_ = Kind::kMultiStep;
  } else if (name == "exp") {
    kind_ = Kind::kExp;
  } else if (name == "inv") {
    kind_ = Kind::kInv;
  } else if (name == "poly") {
    kind_ = Kind::kPoly;
  } else {
    CROSSBOW_ENFORCE_VALUE(false, "unknown lr policy '", name, "' (policies: ", kPolicies, ")");
  }
  CROSSBOW_ENFORCE_VALUE(o.base_lr >= 0 && std::isfinite(o.base_lr),
                         "lr must be a finite number >= 0, got ", o.base_lr);
  CROSSBOW_ENFORCE_VALUE(o.gamma > 0, "lr policy '", name, "': gamma must be > 0, got ", o.gamma);
  CROSSBOW_ENFORCE_VALUE(kind_ != Kind::kStep || o.step_size > 0,
                         "lr policy 'step' needs step_size > 0, got ", o.step_size);
  CROSSBOW_ENFORCE_VALUE(kind_ != Kind::kMultiStep || !o.steps.empty(),
                         "lr policy 'multistep' needs at least one step");
  CROSSBOW_ENFORCE_VALUE(std::is_sorted(o.steps.begin(), o.steps.end()),
                         "lr policy steps must be ascending");
  CROSSBOW_ENFORCE_VALUE(kind_ != Kind::kPoly || o.max > 0,
                         "lr policy 'poly' needs max > 0 (the end of training), got ", o.max);
  CROSSBOW_ENFORCE_VALUE(o.warmup >= 0, "warm-up length must be >= 0, got ", o.warmup);
  CROSSBOW_ENFORCE_VALUE(o.warmup_start >= 0 && o.warmup_start <= 1,
                         "warm-up start factor must be in [0, 1], got ", o.warmup_start);
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
  }
  return o.base_lr;
}

double LrPolicy::At(double t) const {
  const double lr = Base(t);
  const LrPolicyOptions& o = options_;
  if (t >= o.warmup) return lr;
  return lr * (o.warmup_start + (1 - o.warmup_start) * t / o.warmup);
}

}  // namespace crossbow
