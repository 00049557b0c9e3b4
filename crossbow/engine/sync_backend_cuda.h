#pragma once

#include "crossbow/core/context.h"
#include "crossbow/engine/flat_ops_cuda.h"
#include "crossbow/engine/sync_backend.h"

namespace crossbow {

// `table` in device memory, for a kernel over a learner's blobs (flat_ops_cuda.cuh's
// LaunchChunks): uploaded on the learner's context the first time and again only when the
// blobs moved (sync_backend_cuda.cc).
flat::cuda::DeviceTable DeviceTableOf(SegmentTable& table, ContextBase* learner);

}  // namespace crossbow
