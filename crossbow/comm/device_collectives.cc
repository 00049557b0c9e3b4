#include "crossbow/comm/device_collectives.h"

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

DeviceCollectivesFactory& Factory() {
  static DeviceCollectivesFactory factory;
  return factory;
}

}  // namespace

bool RegisterDeviceCollectives(DeviceCollectivesFactory factory) {
  Factory() = std::move(factory);
  return true;
}

std::unique_ptr<DeviceCollectives> MakeDeviceCollectives(const std::vector<Device>& gpus) {
  CROSSBOW_ENFORCE_VALUE(Factory() != nullptr, "collectives between GPUs need a Crossbow built ",
                         "with CUDA and NCCL (configure with -DCROSSBOW_CUDA=ON)");
  return Factory()(gpus);
}

}  // namespace crossbow
