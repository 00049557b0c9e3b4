#include "crossbow/core/fusion.h"

#include <algorithm>
#include <map>
#include <utility>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

using Rules = std::map<std::pair<std::string, std::string>, FusionRule>;

Rules& AllRules() {
  static Rules rules;
  return rules;
}

bool Reads(const OperatorDef& op, const std::string& blob) {
  return std::count(op.inputs.begin(), op.inputs.end(), blob) > 0;
}
bool Writes(const OperatorDef& op, const std::string& blob) {
  return std::count(op.outputs.begin(), op.outputs.end(), blob) > 0;
}

// The index of the operator that `ops[producer]` fuses with, or 0 when there is none.
size_t FusionPartner(const std::vector<OperatorDef>& ops, size_t producer,
                     const std::set<std::string>& keep) {
  const std::string& value = ops[producer].outputs[0];
  size_t k = producer + 1;
  while (k < ops.size() && !Reads(ops[k], value)) {
    if (Writes(ops[k], value)) return 0;  // overwritten unread
    ++k;
  }
  if (k == ops.size()) return 0;
  const OperatorDef& consumer = ops[k];
  if (FusionRegistry::Find(ops[producer].type, consumer.type) == nullptr ||
      consumer.inputs != std::vector<std::string>{value} || consumer.outputs.empty() ||
      Reads(ops[producer], consumer.outputs[0])) {
    return 0;
  }
  const std::string& result = consumer.outputs[0];
  for (size_t m = producer + 1; m < k; ++m) {
    if (Reads(ops[m], result) || Writes(ops[m], result)) return 0;
  }
  if (result == value) return k;  // in place: the consumer's write ends the value's life
  for (size_t m = k + 1; m < ops.size(); ++m) {
    if (Reads(ops[m], value)) return 0;
    if (Writes(ops[m], value)) return k;
  }
  return keep.count(value) ? 0 : k;
}

}  // namespace

bool FusionRegistry::Register(const std::string& producer, const std::string& consumer,
                              FusionRule rule) {
  CROSSBOW_ENFORCE(!AllRules().count({producer, consumer}), "fusion of ", producer, " and ",
                   consumer, " registered twice");
  AllRules()[{producer, consumer}] = std::move(rule);
  return true;
}

const FusionRule* FusionRegistry::Find(const std::string& producer, const std::string& consumer) {
  auto it = AllRules().find({producer, consumer});
  return it == AllRules().end() ? nullptr : &it->second;
}

NetDef FuseOperators(const NetDef& net, const std::set<std::string>& keep) {
  NetDef out = net;
  std::vector<OperatorDef>& ops = out.ops;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].outputs.empty() || ops[i].outputs[0].empty()) continue;
    const size_t k = FusionPartner(ops, i, keep);
    if (k == 0) continue;
    ops[i] = (*FusionRegistry::Find(ops[i].type, ops[k].type))(ops[i], ops[k]);
    ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return out;
}

}  // namespace crossbow
