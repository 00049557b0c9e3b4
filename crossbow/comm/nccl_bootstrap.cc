#include "crossbow/comm/nccl_bootstrap.h"

#ifdef CROSSBOW_WITH_NCCL

#include <cstring>
#include <string>

#include "crossbow/core/enforce.h"

namespace crossbow {
namespace {

void Check(ncclResult_t result, int rank, const char* what) {
  CROSSBOW_ENFORCE(result == ncclSuccess, what, " on rank ", rank, ": ",
                   ncclGetErrorString(result));
}

}  // namespace

NcclCommunicator::NcclCommunicator(ProcessGroup& group, int device,
                                   std::chrono::milliseconds timeout)
    : rank_(group.rank()) {
  const cudaError_t set = cudaSetDevice(device);
  CROSSBOW_ENFORCE(set == cudaSuccess, "rank ", rank_, ": cannot use CUDA device ", device, ": ",
                   cudaGetErrorString(set));
  ncclUniqueId id;
  std::memset(&id, 0, sizeof(id));
  if (rank_ == 0) Check(ncclGetUniqueId(&id), rank_, "ncclGetUniqueId");
  const std::string mine = rank_ == 0 ? std::string(id.internal, sizeof(id.internal)) : "";
  const std::string root = group.AllGather(mine, timeout)[0];
  CROSSBOW_ENFORCE(root.size() == sizeof(id.internal), "rank ", rank_, ": rank 0 sent an NCCL ",
                   "id of ", root.size(), " bytes, expected ", sizeof(id.internal));
  std::memcpy(id.internal, root.data(), root.size());
  Check(ncclCommInitRank(&comm_, group.size(), id, rank_), rank_, "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclCommunicator::Abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

void NcclCommunicator::AllReduceSum(float* data, size_t count, cudaStream_t stream) {
  Check(ncclAllReduce(data, data, count, ncclFloat, ncclSum, comm_, stream), rank_,
        "ncclAllReduce");
}

}  // namespace crossbow

#endif  // CROSSBOW_WITH_NCCL
