#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
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

// A shape as a net builder knows it before any batch size is chosen: the first dimension may
// be open (nullopt), standing for the batch.
using OpenShape = std::vector<std::optional<int64_t>>;

// InferShapes for every batch size at once: `fed` shapes may leave their first dimension open,
// `int_inputs` are int32 (labels). Returns each blob's shape with the first dimension open
// where it is the batch, or nullopt for a blob whose shape depends on the batch some other way
// (a reshape to [4N, 36]). It runs the schemas at two stand-in batches, so every fact comes
// from them; errors print the batch as N.
std::map<std::string, std::optional<OpenShape>> InferOpenBatchShapes(
    const NetDef& net, const std::map<std::string, OpenShape>& fed,
    const std::set<std::string>& int_inputs);

}  // namespace crossbow
