#include "operators/reorder_cache.h"

namespace crossbow {

using namespace dnnl_utils;

void ReorderCache::Run(const Tensor& src, const memory::desc& src_md, Tensor* dst,
                       const memory::desc& dst_md, CPUContext* ctx) {
  if (src_md != src_md_ || dst_md != dst_md_) {
    blocked_to_plain_ = BlockedToPlainCopy::For(src_md, dst_md);
    if (!blocked_to_plain_) {
      reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(ctx->engine(), src_md, ctx->engine(),
                                                             dst_md, Attributes()));
    }
    src_md_ = src_md;
    dst_md_ = dst_md;
  }
  if (blocked_to_plain_) {
    blocked_to_plain_->Run(src.data<float>(), dst->mutable_data<float>());
    return;
  }
  Execute(reorder_,
          {{DNNL_ARG_FROM, Wrap(src, src_md, ctx)}, {DNNL_ARG_TO, Wrap(*dst, dst_md, ctx)}}, ctx);
}

const Tensor& ReorderCache::As(const Tensor& src, const memory::desc& md, Tensor* scratch,
                               CPUContext* ctx) {
  const memory::desc src_md = DescOf(src);
  if (src_md == md) return src;
  ResizeTo(scratch, src.shape(), md);
  Run(src, src_md, scratch, md, ctx);
  return *scratch;
}

memory ReorderCache::Convert(const Tensor& src, const memory::desc& from, const memory::desc& to,
                             CPUContext* ctx) {
  if (from == to) return Wrap(src, to, ctx);
  scratch_.ResizeBlocked(src.shape(), to);
  Run(src, from, &scratch_, to, ctx);
  return Wrap(scratch_, to, ctx);
}

memory ReorderCache::Staging(const Tensor& dst, const memory::desc& from, const memory::desc& to,
                             CPUContext* ctx) {
  staged_ = from != to;
  if (!staged_) return Wrap(dst, to, ctx);
  scratch_.ResizeBlocked(dst.shape(), from);
  staged_from_ = from;
  staged_to_ = to;
  return Wrap(scratch_, from, ctx);
}

void ReorderCache::Commit(Tensor* dst, CPUContext* ctx) {
  if (staged_) Run(scratch_, staged_from_, dst, staged_to_, ctx);
}

}  // namespace crossbow
