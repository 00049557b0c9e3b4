// Chooses the collectives between GPUs: of one process, or one per rank of an MPI job.
#include <set>

#include "crossbow/comm/gpu_collectives.h"
#include "crossbow/comm/make_collectives.h"
#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

std::unique_ptr<Collectives> Make(const std::vector<Device>& gpus, ProcessGroup* ranks,
                                  std::chrono::milliseconds timeout) {
  if (ranks) return MakeRankNcclCollectives(*ranks, gpus[0], timeout);
  std::set<int> distinct;
  std::vector<int> indices;
  std::string names;
  for (const Device& d : gpus) {
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

const bool registered = RegisterGpuCollectives(Make);

}  // namespace
}  // namespace crossbow
