#pragma once

#include <vector>

#include "operators/reorder_cache.h"

namespace crossbow {

// The three passes of a convolution, each of which may run on its own algorithm.
enum class ConvPass { kForward, kBackwardData, kBackwardWeights };

// A convolution Y = conv(X, W) with a square kernel k, stride s and padding p (no dilation,
// groups or bias) as matrix products over channels-last (nhwc) activations. With X unfolded
// into Xu [N*OH*OW, C*k*k] (row: one output position; column: an input channel and kernel
// offset, in W's own (c, u, v) order, 0 at the padding), dY as [N*OH*OW, M] and the plain W
// as [M, C*k*k]:
//   Y   = Xu W^T
//   dW  = dY^T Xu   (fp32, written straight into the plain dW)
//   dXu = dY W      (fp32; dX sums each input position's entries of dXu, rounded once).
// Xu's columns follow W's order, so that W and dW need no transposition (for ResNet's 4x4
// layers W is twice the size of Xu); the unfolding interleaves the taps instead, for 3x3 in
// bf16 by AVX-512 permutes. A 1x1 convolution without stride or padding reads X as Xu and
// writes dXu as dX. X and dY are reordered to nhwc where they arrive in another layout; Y and
// dX are written in it. W is read in the activations' type, converted from the plain fp32 W
// on every run (a plain conversion: 0.7-0.9 against a blocked layout's 1.7 ms for
// 512x512x3x3 from memory).
// Conv and ConvGradient run it where PrefersMatmul (conv_op.h) says so.
class MatmulConv {
 public:
  // For X [N, C, H, W], W [M, C, k, k] and Y [N, M, OH, OW] (ConvOutputShape's), activations
  // of type `type`; builds the products of the passes named.
  void Build(int64_t stride, int64_t pad, const Shape& x, const Shape& w, const Shape& y,
             dnnl::memory::data_type type, const std::vector<ConvPass>& passes, CPUContext* ctx);
  // Whether X or W has a shape other than the latest Build's.
  bool Stale(const Shape& x, const Shape& w) const { return x != x_shape_ || w != w_shape_; }
  void Forward(const Tensor& x, const Tensor& w, Tensor* y, CPUContext* ctx);
  // Those of the gradient passes that were built: dw and dx may be null, not wanted.
  void Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dw, Tensor* dx,
                CPUContext* ctx);
  // oneDNN's names for the products, after "matmul:".
  std::string forward_implementation, weights_implementation, data_implementation;

  // X [N, H, W, C] in nhwc, Y's OH x OW positions and the kernel's.
  struct Geometry {
    int64_t n = 0, h = 0, w = 0, c = 0, oh = 0, ow = 0, kernel = 1, stride = 1, pad = 0;
  };

 private:
  // Xu from the nhwc X: X itself where it already is Xu.
  const Tensor& Unfold(const Tensor& x_nhwc);
  // dX from dXu.
  void Fold(Tensor* dx) const;
  // W as the products read it, in the activations' type.
  dnnl::memory Weights(const Tensor& w, CPUContext* ctx);

  // X is Xu: 1x1, no stride or padding.
  bool Unfolded() const { return g_.kernel == 1 && g_.stride == 1 && g_.pad == 0; }

  Geometry g_;
  Shape x_shape_, w_shape_, y_shape_;
  // 4-D: X and Y (or dY) in nhwc. 2-D: Xu, dY (or Y), dY^T, the plain fp32 W (also dW), W in
  // the activations' type and read transposed, and dXu.
  dnnl::memory::desc x_nhwc_, y_nhwc_, xu_, dy_, dy_t_, w_plain_, w_, w_t_, dxu_;
  dnnl::matmul forward_product_, weights_product_, data_product_;
  ReorderCache x_to_nhwc_, dy_to_nhwc_, w_to_type_;
  Tensor x_nhwc_scratch_, xu_scratch_, dy_nhwc_scratch_, dxu_scratch_;
};

}  // namespace crossbow
