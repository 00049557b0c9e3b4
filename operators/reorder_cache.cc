#include "operators/reorder_cache.h"

namespace crossbow {

using namespace dnnl_utils;

void ReorderCache::Run(const Tensor& src, const memory::desc& src_md, Tensor* dst,
                        const memory::desc& dst_md, CPUContext* ctx) {
  if (src_md != src_md_ || dst_md != dst_md_) {
    reorder_ =
        dnnl::reorder(dnnl::reorder::primitive_desc(ctx->engine(), src_md, ctx->engine(), dst_md));
    src_md_ = src_md;
    dst_md_ = dst_md;
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

}  // namespace crossbow
