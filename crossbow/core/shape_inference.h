#pragma once

#include <functional>
#include <map>
#include <string>

#include "crossbow/core/net_def.h"
#include "crossbow/core/schema.h"

namespace crossbow {

// Shape of a blob fed from outside the net, or nullptr when nobody feeds it.
using ShapeLookup = std::function<const TensorShape*(const std::string&)>;

// Runs every operator's schema (arity, in-place rules, shapes) over the net in order, before
// any work. Returns the shape of every blob the net touches. Throws, naming the operator and
// blob, for unknown operators, blobs that nothing produces, and shape mismatches.
std::map<std::string, TensorShape> InferShapes(const NetDef& net, const ShapeLookup& fed);

}  // namespace crossbow
