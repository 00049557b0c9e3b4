#include "operators/cached_reorder.h"

namespace crossbow::dnnl_utils {

CachedReorder::CachedReorder(const memory::desc& from, const memory::desc& to, CPUContext* ctx)
    : from_(from), to_(to), needed_(from != to) {
  if (needed_)
    reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(ctx->engine(), from, ctx->engine(), to));
}

memory CachedReorder::Convert(const Tensor& src, CPUContext* ctx) {
  if (!needed_) return Wrap(src, to_, ctx);
  scratch_.ResizeBlocked(src.shape(), to_);
  memory out = Wrap(scratch_, to_, ctx);
  Execute(reorder_, {{DNNL_ARG_FROM, Wrap(src, from_, ctx)}, {DNNL_ARG_TO, out}}, ctx);
  return out;
}

memory CachedReorder::Staging(const Tensor& dst, CPUContext* ctx) {
  if (!needed_) return Wrap(dst, from_, ctx);
  scratch_.ResizeBlocked(dst.shape(), from_);
  return Wrap(scratch_, from_, ctx);
}

void CachedReorder::Commit(const Tensor& dst, CPUContext* ctx) {
  if (!needed_) return;
  Execute(reorder_,
          {{DNNL_ARG_FROM, Wrap(scratch_, from_, ctx)}, {DNNL_ARG_TO, Wrap(dst, to_, ctx)}}, ctx);
}

}  // namespace crossbow::dnnl_utils
