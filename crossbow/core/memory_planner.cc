#include "crossbow/core/memory_planner.h"

#include <algorithm>

namespace crossbow {
namespace {

struct Lifetime {
  std::string blob;
  int first = -1, last = -1;
  size_t bytes = 0;
};

std::vector<Lifetime> Lifetimes(const std::vector<OperatorDef>& ops,
                                const std::map<std::string, size_t>& bytes) {
  std::map<std::string, Lifetime> spans;
  auto touch = [&](const std::string& blob, int index) {
    auto it = bytes.find(blob);
    if (blob.empty() || it == bytes.end()) return;
    Lifetime& span = spans[blob];
    if (span.first < 0) span = {blob, index, index, it->second};
    span.last = index;
  };
  for (int i = 0; i < static_cast<int>(ops.size()); ++i) {
    for (const auto& in : ops[i].inputs) touch(in, i);
    for (const auto& out : ops[i].outputs) touch(out, i);
  }
  std::vector<Lifetime> out;
  for (auto& kv : spans) out.push_back(kv.second);
  std::sort(out.begin(), out.end(), [](const Lifetime& a, const Lifetime& b) {
    return a.first != b.first ? a.first < b.first : a.bytes > b.bytes;
  });
  return out;
}

}  // namespace

MemoryPlan PlanMemory(const std::vector<OperatorDef>& ops,
                      const std::map<std::string, size_t>& bytes) {
  MemoryPlan plan;
  std::vector<int> busy_until;  // per buffer: the last op that reads its current blob
  for (const Lifetime& span : Lifetimes(ops, bytes)) {
    int best = -1;
    for (int b = 0; b < static_cast<int>(busy_until.size()); ++b) {
      if (busy_until[b] >= span.first) continue;
      const size_t have = plan.buffer_bytes[b];
      if (best < 0) {
        best = b;
        continue;
      }
      const size_t best_have = plan.buffer_bytes[best];
      const bool fits = have >= span.bytes, best_fits = best_have >= span.bytes;
      // Smallest buffer that fits; failing that, the largest one (grown the least).
      if ((fits && (!best_fits || have < best_have)) || (!fits && !best_fits && have > best_have)) {
        best = b;
      }
    }
    if (best < 0) {
      best = static_cast<int>(plan.buffer_bytes.size());
      plan.buffer_bytes.push_back(0);
      busy_until.push_back(-1);
    }
    plan.buffer_bytes[best] = std::max(plan.buffer_bytes[best], span.bytes);
    busy_until[best] = span.last;
    plan.buffer_of[span.blob] = best;
    plan.unplanned_bytes += span.bytes;
  }
  for (size_t b : plan.buffer_bytes) plan.planned_bytes += b;
  return plan;
}

}  // namespace crossbow
