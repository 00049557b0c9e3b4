#include "operators/weight_gradient.h"

namespace crossbow {

using namespace dnnl_utils;

void WeightGradientPass::Build(const dnnl::primitive& primitive, const memory::desc& dw_md,
                               const memory::desc& w_plain_md, const Shape& w_shape) {
  primitive_ = primitive;
  dw_md_ = dw_md;
  w_plain_md_ = w_plain_md;
  w_shape_ = w_shape;
}

void WeightGradientPass::Run(const memory& x, const memory& dy, Tensor* dw, Tensor* db,
                             CPUContext* ctx) {
  if (dw == nullptr) dw = &unwanted_dw_;
  dw->Resize(w_shape_);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, x},
      {DNNL_ARG_DIFF_DST, dy},
      {DNNL_ARG_DIFF_WEIGHTS, dw_to_plain_.Staging(*dw, dw_md_, w_plain_md_, ctx)}};
  if (db != nullptr) {
    db->Resize({w_shape_[0]});
    args[DNNL_ARG_DIFF_BIAS] = Wrap(*db, ctx);
  }
  Execute(primitive_, std::move(args), ctx);
  dw_to_plain_.Commit(dw, ctx);
}

}  // namespace crossbow
