#pragma once

#include <map>
#include <string>
#include <vector>

#include "crossbow/core/net_def.h"

namespace crossbow {

struct GradientNet {
  std::vector<OperatorDef> ops;                  // the backward pass, in execution order
  std::map<std::string, std::string> gradients;  // parameter -> its gradient blob
};

// Reverse-mode autodiff over operator definitions: seeds d loss = 1, walks `forward` backwards
// asking each operator's gradient maker for gradient operators, and adds up (with Sum) the
// gradients of blobs that feed several operators. Only blobs that depend on a parameter get
// gradients, so no work is spent on the input's gradient. Throws when the loss does not
// depend on a parameter, or an operator on the way has no gradient.
GradientNet AddGradientOps(const NetDef& forward, const std::string& loss,
                           const std::vector<std::string>& params);

}  // namespace crossbow
