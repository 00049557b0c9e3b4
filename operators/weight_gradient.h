#pragma once

#include "operators/reorder_cache.h"

namespace crossbow {

// The backward-weights pass that ConvGradient and FCGradient share: their primitive reads X and
// dY (as they hand them over, in its layouts) and writes dW in its own layout, reordered into
// the plain dW where the two differ, and db. Without a named dW (only db wanted) dW goes to a
// scratch tensor of this pass's.
class WeightGradientPass {
 public:
  // `primitive` writes dW laid out as `dw_md`; the plain dW is laid out as `w_plain_md`.
  void Build(const dnnl::primitive& primitive, const dnnl::memory::desc& dw_md,
             const dnnl::memory::desc& w_plain_md, const Shape& w_shape);
  // dw or db may be null: unnamed (db also where the layer has no bias, as Build's primitive).
  void Run(const dnnl::memory& x, const dnnl::memory& dy, Tensor* dw, Tensor* db, CPUContext* ctx);

 private:
  dnnl::primitive primitive_;
  dnnl::memory::desc dw_md_, w_plain_md_;
  Shape w_shape_;
  ReorderCache dw_to_plain_;
  Tensor unwanted_dw_;
};

}  // namespace crossbow
