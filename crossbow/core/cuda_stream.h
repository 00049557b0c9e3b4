#pragma once

#include <cuda_runtime.h>

#include "crossbow/core/context_cuda.h"
#include "crossbow/core/enforce.h"

namespace crossbow::cuda {

// The stream of a context that must be a CUDAContext (engine and collectives code that is
// handed a ContextBase).
inline CUDAContext& CudaContextOf(ContextBase* context) {
  auto* cuda = dynamic_cast<CUDAContext*>(context);
  CROSSBOW_ENFORCE(cuda != nullptr, "expected a CUDA context, got one on ",
                   context ? context->device().ToString() : std::string("nothing"));
  return *cuda;
}
inline cudaStream_t StreamOf(ContextBase* context) { return CudaContextOf(context).stream(); }

}  // namespace crossbow::cuda
