// Chooses the collectives between the GPUs of one process.
#include <set>

#include "crossbow/comm/gpu_collectives.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

std::unique_ptr<DeviceCollectives> Make(const std::vector<Device>& gpus) {
  std::set<int> distinct;
  std::vector<int> indices;
  std::string names;
  for (const Device& d : gpus) {
    CROSSBOW_ENFORCE_VALUE(d.type == DeviceType::kCUDA, "collectives between GPUs got device ",
                           d.ToString());
    distinct.insert(d.index);
    indices.push_back(d.index);
    names += (names.empty() ? "" : ",") + d.ToString();
  }
  if (distinct.size() == gpus.size()) return MakeNcclCollectives(indices);
  if (distinct.size() == 1)
    return MakePeerCopyCollectives(indices[0], static_cast<int>(gpus.size()));
  throw ValueError(detail::Concat(
      "devices '", names, "': several logical devices on each of several GPUs are not supported ",
      "yet; use distinct GPUs (cuda:0,cuda:1) or logical devices of one GPU (cuda:0,cuda:0)"));
}

const bool registered = RegisterDeviceCollectives(Make);

}  // namespace
}  // namespace crossbow
