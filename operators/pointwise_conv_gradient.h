#pragma once

#include "operators/reorder_cache.h"

namespace crossbow {

// The gradients of a 1x1 convolution Y = conv(X, W) with stride s and no padding, dilation,
// groups or bias, as two matrix products over channels-last (nhwc) activations: with X sampled
// at the stride a matrix Xs [N*OH*OW, C], dY one [N*OH*OW, M] and W one [M, C],
//   dW = dY^T Xs   (fp32, written straight into the plain dW)
//   dXs = dY W     (in the activations' type; dX is dXs at the sampled positions, 0 elsewhere).
// X and dY are reordered to nhwc where they arrive in another layout; dX is written in it.
// ConvGradient runs it where PrefersPointwiseGradient (conv_op.h) says so.
class PointwiseConvGradient {
 public:
  // For X [N, C, H, W] and W [M, C, 1, 1], activations of type `type`.
  void Build(int64_t stride, const Shape& x, const Shape& w, dnnl::memory::data_type type,
             CPUContext* ctx);
  // dw and dx may be null: not wanted.
  void Run(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dw, Tensor* dx,
           CPUContext* ctx);
  // oneDNN's names for the two matrix products.
  std::string weights_implementation, data_implementation;

 private:
  void BackwardData(const Tensor& w, const Tensor& dy, Tensor* dx, CPUContext* ctx);

  int64_t stride_ = 1;
  size_t channel_bytes_ = 0;  // one position's C values
  Shape x_shape_, w_shape_, xs_shape_;
  // 4-D: X and dY in nhwc; X at the sampled positions, packed.
  dnnl::memory::desc x_nhwc_, dy_nhwc_, xs_nhwc_;
  // 2-D operands of the products: dY^T, Xs (also dXs's layout) and dW (also the plain W's);
  // dY, and W as the data product reads it.
  dnnl::memory::desc dy_t_, xs_, dw_, dy_, w_product_;
  dnnl::matmul weights_product_, data_product_;
  ReorderCache x_to_nhwc_, dy_to_nhwc_, w_to_product_;
  Tensor x_nhwc_scratch_, xs_scratch_, dy_nhwc_scratch_, w_scratch_, dxs_scratch_;
};

}  // namespace crossbow
