#pragma once

#include <functional>
#include <set>
#include <string>

#include "crossbow/core/net_def.h"
#include "crossbow/core/schema.h"  // CROSSBOW_CONCAT

namespace crossbow {

// Builds the one operator that does `producer` then `consumer`, where the consumer's only input
// is the producer's output 0 and nothing else reads that value. The fused operator writes the
// consumer's output 0 in place of the producer's, and may add outputs of its own.
using FusionRule =
    std::function<OperatorDef(const OperatorDef& producer, const OperatorDef& consumer)>;

// Fusion rules by (producer type, consumer type), registered by the fused operator's family in
// operators/ (REGISTER_FUSION), so that core names no operator.
class FusionRegistry {
 public:
  static bool Register(const std::string& producer, const std::string& consumer, FusionRule rule);
  static const FusionRule* Find(const std::string& producer, const std::string& consumer);
};

// The forward net with every registered pair fused, before autodiff: a pair fuses when the
// consumer is the first and only reader of the producer's output 0 (up to the next write of
// that name), no operator in between touches the consumer's output, and the producer's output
// is not in `keep` (unless the consumer overwrites it in place, as an in-place Relu does).
NetDef FuseOperators(const NetDef& net, const std::set<std::string>& keep);

}  // namespace crossbow

// Use at namespace crossbow scope.
#define REGISTER_FUSION(producer, consumer, rule)                                  \
  static const bool CROSSBOW_CONCAT(fusion_##producer##_##consumer##_, __LINE__) = \
      ::crossbow::FusionRegistry::Register(#producer, #consumer, rule)
