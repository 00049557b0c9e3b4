#include "crossbow/comm/make_collectives.h"

#include "crossbow/comm/in_process.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

GpuCollectivesFactory& GpuFactory() {
  static GpuCollectivesFactory factory;
  return factory;
}

}  // namespace

bool RegisterGpuCollectives(GpuCollectivesFactory factory) {
  GpuFactory() = std::move(factory);
  return true;
}

std::unique_ptr<Collectives> MakeCollectives(const std::vector<Device>& devices,
                                             std::shared_ptr<ProcessGroup> group,
                                             std::chrono::milliseconds timeout) {
  CROSSBOW_ENFORCE_VALUE(!devices.empty(), "collectives need at least one device");
  const int n = static_cast<int>(devices.size());
  for (const Device& d : devices) {
    CROSSBOW_ENFORCE_VALUE(d.type == devices[0].type, "collectives over devices ",
                           devices[0].ToString(), " and ", d.ToString(),
                           ": CPU and GPU devices cannot be mixed");
  }
  if (devices[0].type == DeviceType::kCPU) {
    const int rank = group ? group->rank() : 0;
    return std::make_unique<InProcessCollectives>(n, std::move(group), rank);
  }
  ProcessGroup* ranks = group && group->size() > 1 ? group.get() : nullptr;
  if (ranks) {
    CROSSBOW_ENFORCE_VALUE(n == 1, "rank ", ranks->rank(), ": with several MPI ranks each rank ",
                           "drives one GPU (launch one rank per GPU with --devices cuda:N); got ",
                           n, " devices");
  } else if (n == 1) {
    return std::make_unique<InProcessCollectives>(1);
  }
  CROSSBOW_ENFORCE_VALUE(GpuFactory() != nullptr, "collectives between GPUs need a Crossbow ",
                         "built with CUDA and NCCL (configure with -DCROSSBOW_CUDA=ON)");
  return GpuFactory()(devices, ranks, timeout);
}

}  // namespace crossbow
