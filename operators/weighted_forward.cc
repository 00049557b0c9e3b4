#include "operators/weighted_forward.h"

namespace crossbow {

using namespace dnnl_utils;

bool WeightedForwardPass::Stale(const memory::desc& x_md, const Tensor& w, const Tensor* b) const {
  return x_md != x_md_ || w.shape() != w_shape_ || (b != nullptr && b->shape() != b_shape_);
}

void WeightedForwardPass::Build(const dnnl::primitive& primitive, const memory::desc& x_md,
                                const memory::desc& x_from, const memory::desc& x_to,
                                const memory::desc& w_plain_md, const memory::desc& w_md,
                                const Tensor& w, const Tensor* b) {
  primitive_ = primitive;
  x_md_ = x_md;
  x_from_ = x_from;
  x_to_ = x_to;
  w_plain_md_ = w_plain_md;
  w_md_ = w_md;
  w_shape_ = w.shape();
  if (b != nullptr) b_shape_ = b->shape();
}

void WeightedForwardPass::Run(const Tensor& x, const Tensor& w, const Tensor* b, const memory& y,
                              CPUContext* ctx) {
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, x_reorder_.Convert(x, x_from_, x_to_, ctx)},
      {DNNL_ARG_WEIGHTS, w_reorder_.Convert(w, w_plain_md_, w_md_, ctx)},
      {DNNL_ARG_DST, y}};
  if (b != nullptr) args[DNNL_ARG_BIAS] = Wrap(*b, ctx);
  Execute(primitive_, std::move(args), ctx);
}

}  // namespace crossbow
