#include "crossbow/comm/device_collectives.h"

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

DeviceCollectivesFactory& Factory() {
  static DeviceCollectivesFactory factory;
  return factory;
}

RankDeviceCollectivesFactory& RankFactory() {
  static RankDeviceCollectivesFactory factory;
  return factory;
}

}  // namespace

bool RegisterRankDeviceCollectives(RankDeviceCollectivesFactory factory) {
  RankFactory() = std::move(factory);
  return true;
}

std::unique_ptr<DeviceCollectives> MakeRankDeviceCollectives(ProcessGroup& group, Device gpu,
                                                             std::chrono::milliseconds timeout) {
  CROSSBOW_ENFORCE_VALUE(RankFactory() != nullptr, "GPUs across MPI ranks need a Crossbow built ",
                         "with CUDA, MPI and NCCL (configure with -DCROSSBOW_CUDA=ON after ",
                         "installing libopenmpi-dev)");
  return RankFactory()(group, gpu, timeout);
}

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
