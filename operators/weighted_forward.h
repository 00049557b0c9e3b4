#pragma once

#include "operators/reorder_cache.h"

namespace crossbow {

// The forward pass that Conv and FC share, Y = op(X, W) + b on one oneDNN primitive: X is
// reordered from the layout the operator reads it in to the one the primitive takes (where
// they differ), the plain W into the primitive's layout (a cached reorder), b read as it is.
// The operator builds the primitive again when Stale says that its inputs changed.
class WeightedForwardPass {
 public:
  // Whether X laid out as `x_md`, W or the optional b differ from those of the latest Build.
  bool Stale(const dnnl::memory::desc& x_md, const Tensor& w, const Tensor* b) const;
  // `primitive` for X laid out as `x_md`, read as `x_from` and taken as `x_to`, and W, plain as
  // `w_plain_md`, taken as `w_md`; b is null without a bias.
  void Build(const dnnl::primitive& primitive, const dnnl::memory::desc& x_md,
             const dnnl::memory::desc& x_from, const dnnl::memory::desc& x_to,
             const dnnl::memory::desc& w_plain_md, const dnnl::memory::desc& w_md, const Tensor& w,
             const Tensor* b);
  // Writes Y into `y` (the operator's output, resized and wrapped in the primitive's layout).
  void Run(const Tensor& x, const Tensor& w, const Tensor* b, const dnnl::memory& y,
           CPUContext* ctx);

 private:
  dnnl::primitive primitive_;
  dnnl::memory::desc x_md_, x_from_, x_to_, w_plain_md_, w_md_;
  Shape w_shape_, b_shape_;
  ReorderCache x_reorder_, w_reorder_;
};

}  // namespace crossbow
