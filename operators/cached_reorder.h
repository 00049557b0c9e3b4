#pragma once

#include "operators/dnnl_utils.h"

namespace crossbow::dnnl_utils {

// A reorder between two fixed layouts, with its primitive and scratch buffer kept across runs,
// that costs nothing when the two layouts agree. Operators use it to bring inputs into the
// layout their primitive picked (Convert) and results back into the layout their output needs
// (Staging, then Commit).
class CachedReorder {
 public:
  CachedReorder() = default;
  CachedReorder(const memory::desc& from, const memory::desc& to, CPUContext* ctx);

  const memory::desc& to() const { return to_; }
  // `src` (laid out as `from`) in the `to` layout: src's own bytes, or a copy in the scratch.
  memory Convert(const Tensor& src, CPUContext* ctx);
  // Where a primitive writes, in the `from` layout, a result that `dst` holds in the `to`
  // layout: dst's own bytes, or the scratch until Commit() copies it into dst.
  memory Staging(const Tensor& dst, CPUContext* ctx);
  void Commit(const Tensor& dst, CPUContext* ctx);

 private:
  memory::desc from_, to_;
  bool needed_ = false;
  dnnl::reorder reorder_;
  Tensor scratch_;
};

}  // namespace crossbow::dnnl_utils
