#include "operators/cuda_launch.cuh"
#include "operators/filler_op_cuda.h"
#include "operators/random_cuda.cuh"

namespace crossbow::cuda {
namespace {

__global__ void FillConstantKernel(float* out, int64_t n, float value) {
  CUDA_KERNEL_LOOP(i, n) { out[i] = value; }
}

// One thread per draw of four words, for four consecutive elements: uniform values in [min,
// max), min + (max - min) u as std::uniform_real_distribution draws them.
__global__ void FillUniformKernel(float* out, int64_t n, float min, float range, uint64_t seed,
                                  const unsigned long long* offset) {
  const uint64_t draw_offset = *offset;
  CUDA_KERNEL_LOOP(group, (n + kElementsPerDraw - 1) / kElementsPerDraw) {
    const RandomWords words = RandomDraw(seed, draw_offset, group);
    for (int k = 0; k < kElementsPerDraw && group * kElementsPerDraw + k < n; ++k) {
      out[group * kElementsPerDraw + k] = min + range * UniformFromBits(words.v[k]);
    }
  }
}

// Four normal values from the two Box-Muller pairs of one draw.
__global__ void FillNormalKernel(float* out, int64_t n, float mean, float std, uint64_t seed,
                                 const unsigned long long* offset) {
  const uint64_t draw_offset = *offset;
  CUDA_KERNEL_LOOP(group, (n + kElementsPerDraw - 1) / kElementsPerDraw) {
    const RandomWords words = RandomDraw(seed, draw_offset, group);
    float z[kElementsPerDraw];
    NormalsFromBits(words.v[0], words.v[1], &z[0], &z[1]);
    NormalsFromBits(words.v[2], words.v[3], &z[2], &z[3]);
    for (int k = 0; k < kElementsPerDraw && group * kElementsPerDraw + k < n; ++k) {
      out[group * kElementsPerDraw + k] = mean + std * z[k];
    }
  }
}

int DrawBlocks(int64_t n) { return BlocksFor((n + kElementsPerDraw - 1) / kElementsPerDraw); }

}  // namespace

void LaunchFillConstant(float* out, int64_t n, float value, cudaStream_t stream) {
  FillConstantKernel<<<BlocksFor(n), kThreadsPerBlock, 0, stream>>>(out, n, value);
}

void LaunchFillUniform(float* out, int64_t n, float min, float max, uint64_t seed,
                       unsigned long long* offset, cudaStream_t stream) {
  FillUniformKernel<<<DrawBlocks(n), kThreadsPerBlock, 0, stream>>>(out, n, min, max - min, seed,
                                                                    offset);
  AdvanceRandomOffset(offset, stream);
}

void LaunchFillNormal(float* out, int64_t n, float mean, float std, uint64_t seed,
                      unsigned long long* offset, cudaStream_t stream) {
  FillNormalKernel<<<DrawBlocks(n), kThreadsPerBlock, 0, stream>>>(out, n, mean, std, seed, offset);
  AdvanceRandomOffset(offset, stream);
}

}  // namespace crossbow::cuda
