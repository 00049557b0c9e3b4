#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "operators/dnnl_utils.h"

namespace crossbow {

// A copy of float32 weights from a oneDNN layout that blocks both M and C (ABcd16b16a, the
// weight gradient's layout on AVX-512) to plain [M, C, H, W], for rows of C * H * W floats a
// multiple of 4 KiB apart (1x1 convolutions of 1,024 and 2,048 input channels). oneDNN's reorder
// writes 16 such rows at a time, which then share one set of the first-level cache: it copies
// 0.33 elements per ns on a Zen 4 core there, against 1.3-2.5 for other shapes. This copy writes
// each row's part of a block in one sequential run and gathers its elements from the block
// (1.3-1.6 elements per ns on those shapes).
class BlockedToPlainCopy {
 public:
  // The copy from `from` to `to`, or none where the pair is not one it does (oneDNN's reorder
  // does those): 4-D float32, `from` blocked on exactly dimensions 0 and 1 with no padding,
  // `to` plain with rows a multiple of 1,024 floats.
  static std::optional<BlockedToPlainCopy> For(const dnnl::memory::desc& from,
                                               const dnnl::memory::desc& to);

  // Copies src (laid out as `from`) into dst (as `to`), on the calling OpenMP team.
  void Run(const float* src, float* dst) const;

 private:
  BlockedToPlainCopy() = default;

  int64_t blocks_m_ = 0, blocks_c_ = 0;  // blocks along M and along C
  // Block (i, j) starts at i * src_step_m_ + j * src_step_c_ in the source, likewise in dst.
  int64_t src_step_m_ = 0, src_step_c_ = 0, dst_step_m_ = 0, dst_step_c_ = 0;
  // For each element of a block in the order dst is written, its offsets from the block's
  // first element in src and in dst.
  std::vector<int64_t> src_offsets_, dst_offsets_;
};

}  // namespace crossbow
