#include <algorithm>

#include "crossbow/comm/reduce_kernels.h"
#include "crossbow/core/check_cuda.h"

namespace crossbow::comm::cuda {
namespace {

struct Buffers {
  float* p[kMaxSumBuffers];
  int count;
};

// Each element is read from every buffer before any is written, by the same thread.
__global__ void SumInPlaceKernel(Buffers buffers, int64_t n) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float s = buffers.p[0][i];
    for (int r = 1; r < buffers.count; ++r) s += buffers.p[r][i];
    for (int r = 0; r < buffers.count; ++r) buffers.p[r][i] = s;
  }
}

}  // namespace

void SumInPlace(const std::vector<float*>& buffers, int64_t n, cudaStream_t stream) {
  CROSSBOW_ENFORCE_VALUE(!buffers.empty() && buffers.size() <= kMaxSumBuffers, "a sum on one GPU ",
                         "takes 1 to ", kMaxSumBuffers, " buffers, got ", buffers.size());
  if (n == 0) return;
  Buffers b{};
  b.count = static_cast<int>(buffers.size());
  std::copy(buffers.begin(), buffers.end(), b.p);
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 8192));
  SumInPlaceKernel<<<blocks, kThreads, 0, stream>>>(b, n);
  CUDA_CHECK(cudaGetLastError(), "summing ", buffers.size(), " buffers of ", n,
             " floats on one GPU");
}

}  // namespace crossbow::comm::cuda
