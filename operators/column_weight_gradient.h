#pragma once

#include "operators/reorder_cache.h"

namespace crossbow {

// The weight gradient of a convolution Y = conv(X, W) with a square kernel k, stride s and
// padding p (no dilation, groups or bias) as one matrix product over channels-last (nhwc)
// activations: X's patches gathered into Col [N*OH*OW, k*k*C] (row (n, i, j) holds
// X[n, i*s+u-p, j*s+v-p, :] for every kernel offset (u, v), zeros where it reaches into the
// padding), then
//   dW' = dY^T Col   (fp32 [M, k*k*C]: the weights in ohwi order),
// and the plain dW [M, C, k, k] from dW'. X and dY are reordered to nhwc where they arrive in
// another layout. ConvGradient runs it where PrefersColumnWeightGradient (conv_op.h) says so.
class ColumnWeightGradient {
 public:
  // For X [N, C, H, W], W [M, C, k, k] and Y [N, M, OH, OW], activations of type `type`.
  void Build(int64_t stride, int64_t pad, const Shape& x, const Shape& w, const Shape& y,
             dnnl::memory::data_type type, CPUContext* ctx);
  void Run(const Tensor& x, const Tensor& dy, Tensor* dw, CPUContext* ctx);
  // oneDNN's name for the matrix product.
  std::string implementation;

 private:
  void GatherPatches(const char* x, char* col) const;

  int64_t stride_ = 1, pad_ = 0;
  size_t channel_bytes_ = 0;  // one position's C values
  Shape x_shape_, w_shape_, y_shape_, col_shape_;
  dnnl::memory::desc x_nhwc_, dy_nhwc_;
  dnnl::memory::desc dy_t_, col_, dw_ohwi_;
  dnnl::matmul product_;
  ReorderCache x_to_nhwc_, dy_to_nhwc_;
  Tensor x_nhwc_scratch_, dy_nhwc_scratch_, col_scratch_, dw_ohwi_scratch_;
};

}  // namespace crossbow
