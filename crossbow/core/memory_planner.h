#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "crossbow/core/net_def.h"

namespace crossbow {

// Which shared buffer each intermediate blob lives in. Blobs whose lifetimes (first write to
// last read, in op order) do not overlap share a buffer; a blob is never placed in a buffer
// that an input of the same operator still occupies.
struct MemoryPlan {
  std::vector<size_t> buffer_bytes;
  std::map<std::string, int> buffer_of;  // blob -> index into buffer_bytes
  size_t planned_bytes = 0;              // sum of buffer_bytes
  size_t unplanned_bytes = 0;            // sum of every planned blob's own size
};

// `bytes` names the blobs to plan and the bytes each needs; other blobs are left alone.
MemoryPlan PlanMemory(const std::vector<OperatorDef>& ops,
                      const std::map<std::string, size_t>& bytes);

}  // namespace crossbow
