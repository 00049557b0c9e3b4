#pragma once

#include <optional>

#include "operators/blocked_to_plain_copy.h"
#include "operators/dnnl_utils.h"

namespace crossbow {

// A reorder whose primitive is kept across runs and rebuilt only when the source or
// destination layout changes, for operators that convert layouts on every iteration. When the
// two layouts agree, nothing is copied. The copies BlockedToPlainCopy takes (weight gradients
// whose plain rows are 4 KiB apart) bypass oneDNN's reorder, which is slow on them.
class ReorderCache {
 public:
  // Copies the bytes of `src`, read as `src_md` (its own layout or a sub-region of it),
  // into the bytes of `dst`, written as `dst_md`. `dst` must already hold them.
  void Run(const Tensor& src, const dnnl::memory::desc& src_md, Tensor* dst,
           const dnnl::memory::desc& dst_md, CPUContext* ctx);
  // `src` laid out as `md`: `src` itself when it already is, else a copy in `scratch`.
  const Tensor& As(const Tensor& src, const dnnl::memory::desc& md, Tensor* scratch,
                   CPUContext* ctx);
  // The same, copying into this cache's own scratch.
  const Tensor& As(const Tensor& src, const dnnl::memory::desc& md, CPUContext* ctx) {
    return As(src, md, &scratch_, ctx);
  }
  const Tensor& AsPlain(const Tensor& src, CPUContext* ctx) {
    return As(src, dnnl_utils::PlainDesc(src.shape()), ctx);
  }
  // `src`, read as `from`, as a memory laid out as `to`: src's own bytes, or a copy in this
  // cache's scratch.
  dnnl::memory Convert(const Tensor& src, const dnnl::memory::desc& from,
                       const dnnl::memory::desc& to, CPUContext* ctx);
  // Where a primitive writes, laid out as `from`, a result that `dst` holds laid out as `to`:
  // dst's own bytes, or this cache's scratch until Commit() reorders it into dst.
  dnnl::memory Staging(const Tensor& dst, const dnnl::memory::desc& from,
                       const dnnl::memory::desc& to, CPUContext* ctx);
  void Commit(Tensor* dst, CPUContext* ctx);

 private:
  dnnl::memory::desc src_md_, dst_md_, staged_from_, staged_to_;
  dnnl::reorder reorder_;
  std::optional<BlockedToPlainCopy> blocked_to_plain_;
  Tensor scratch_;
  bool staged_ = false;
};

}  // namespace crossbow
