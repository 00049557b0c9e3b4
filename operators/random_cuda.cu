#include "operators/random_cuda.cuh"

namespace crossbow::cuda {
namespace {

__global__ void AdvanceOffsetKernel(unsigned long long* offset) { *offset += 1; }

}  // namespace

void AdvanceRandomOffset(unsigned long long* offset, cudaStream_t stream) {
  AdvanceOffsetKernel<<<1, 1, 0, stream>>>(offset);
}

}  // namespace crossbow::cuda
