#include "operators/blocked_to_plain_copy.h"

#include <algorithm>

#include "operators/parallel_threshold.h"

namespace crossbow {

namespace {

using dnnl::memory;

// Elements per 4 KiB, the span after which rows share first-level cache sets.
constexpr int64_t kAliasingFloats = 1024;
// Bound on a block's elements (16 x 16 channels of a 7 x 7 kernel), so that its offsets stay in
// the first-level cache beside the data.
constexpr int64_t kMaxBlockElements = 16 * 16 * 49;

// Offset inside one inner block of the block's element (m, c): oneDNN's innermost block varies
// fastest, and a dimension blocked twice (8b16a2b) splits its index outer-major.
int64_t InnerOffset(const dnnl_blocking_desc_t& b, int64_t m, int64_t c) {
  int64_t rest[2] = {m, c}, offset = 0, stride = 1;
  for (int k = b.inner_nblks - 1; k >= 0; --k) {
    const int dim = static_cast<int>(b.inner_idxs[k]);
    offset += rest[dim] % b.inner_blks[k] * stride;
    rest[dim] /= b.inner_blks[k];
    stride *= b.inner_blks[k];
  }
  return offset;
}

// Elements of dimension `dim` one inner block spans (1 where it is not blocked).
int64_t BlockSize(const dnnl_blocking_desc_t& b, int dim) {
  int64_t size = 1;
  for (int k = 0; k < b.inner_nblks; ++k) {
    if (b.inner_idxs[k] == dim) size *= b.inner_blks[k];
  }
  return size;
}

}  // namespace

std::optional<BlockedToPlainCopy> BlockedToPlainCopy::For(const memory::desc& from,
                                                          const memory::desc& to) {
  const dnnl_memory_desc_t& f = from.data;
  if (f.ndims != 4 || f.data_type != dnnl_f32 || f.format_kind != dnnl_blocked || f.offset0 != 0 ||
      f.extra.flags != 0 || !std::equal(f.dims, f.dims + 4, f.padded_dims)) {
    return std::nullopt;
  }
  const Shape shape(f.dims, f.dims + 4);
  if (to != dnnl_utils::PlainDesc(shape)) return std::nullopt;
  const dnnl_blocking_desc_t& b = f.format_desc.blocking;
  for (int k = 0; k < b.inner_nblks; ++k) {
    if (b.inner_idxs[k] > 1) return std::nullopt;
  }
  const int64_t block_m = BlockSize(b, 0), block_c = BlockSize(b, 1);
  const int64_t spatial = shape[2] * shape[3], row = shape[1] * spatial;
  if (row % kAliasingFloats != 0 || block_m == 1 || block_c == 1 ||
      block_m * block_c * spatial > kMaxBlockElements) {
    return std::nullopt;
  }
  BlockedToPlainCopy copy;
  copy.blocks_m_ = shape[0] / block_m;
  copy.blocks_c_ = shape[1] / block_c;
  copy.src_step_m_ = b.strides[0];
  copy.src_step_c_ = b.strides[1];
  copy.dst_step_m_ = block_m * row;
  copy.dst_step_c_ = block_c * spatial;
  // Plain offsets grow with (m, c, h, w) in this order: dst is written in sequence.
  for (int64_t m = 0; m < block_m; ++m) {
    for (int64_t c = 0; c < block_c; ++c) {
      for (int64_t h = 0; h < shape[2]; ++h) {
        for (int64_t w = 0; w < shape[3]; ++w) {
          copy.dst_offsets_.push_back(m * row + (c * shape[2] + h) * shape[3] + w);
          copy.src_offsets_.push_back(h * b.strides[2] + w * b.strides[3] + InnerOffset(b, m, c));
        }
      }
    }
  }
  return copy;
}

void BlockedToPlainCopy::Run(const float* src, float* dst) const {
  const auto n = static_cast<int64_t>(src_offsets_.size());
  const int64_t* from = src_offsets_.data();
  const int64_t* to = dst_offsets_.data();
#pragma omp parallel for collapse(2) \
    schedule(static) if (blocks_m_ * blocks_c_ * n >= kMinParallelElements)
  for (int64_t i = 0; i < blocks_m_; ++i) {
    for (int64_t j = 0; j < blocks_c_; ++j) {
      const float* in = src + i * src_step_m_ + j * src_step_c_;
      float* out = dst + i * dst_step_m_ + j * dst_step_c_;
      for (int64_t k = 0; k < n; ++k) out[to[k]] = in[from[k]];
    }
  }
}

}  // namespace crossbow
