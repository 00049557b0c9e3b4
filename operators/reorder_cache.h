#pragma once

#include "operators/dnnl_utils.h"

namespace crossbow {

// A reorder whose primitive is kept across runs and rebuilt only when the source or
// destination layout changes, for operators that convert layouts on every iteration.
class ReorderCache {
 public:
  // Copies the bytes of `src`, read as `src_md` (its own layout or a sub-region of it),
  // into the bytes of `dst`, written as `dst_md`. `dst` must already hold them.
  void Run(const Tensor& src, const dnnl::memory::desc& src_md, Tensor* dst,
           const dnnl::memory::desc& dst_md, CPUContext* ctx);
  // `src` laid out as `md`: `src` itself when it already is, else a copy in `scratch`.
  const Tensor& As(const Tensor& src, const dnnl::memory::desc& md, Tensor* scratch,
                   CPUContext* ctx);

 private:
  dnnl::memory::desc src_md_, dst_md_;
  dnnl::reorder reorder_;
};

}  // namespace crossbow
