#pragma once

#include <optional>

#include "crossbow/core/operator.h"
#include "operators/amx_conv_weight_gradient.h"
#include "operators/matmul_conv.h"
#include "operators/reorder_cache.h"
#include "operators/weight_gradient.h"
#include "operators/weighted_forward.h"

namespace crossbow {

// A square 2-D convolution's arguments, read and checked once per operator.
struct ConvParams {
  explicit ConvParams(const OperatorDef& def);
  int64_t kernel, stride, pad, dilation, group;
};

// Y's shape for X [N, C, H, W], W [M, C/group, k, k] and, when given, b [M]. Throws a
// ValueError naming the operator, the input and both shapes when they do not fit together.
Shape ConvOutputShape(const OperatorDef& def, const ConvParams& p, const Shape& x, const Shape& w,
                      const Shape* b);

// Whether a convolution's `pass` runs as Winograd F(4x4, 3x3) rather than direct: 3x3, stride 1,
// no dilation or groups, fp32, at least 32 output tiles of 4x4 over the batch, and at least 32
// input and output channels (16 for the weight gradient). Winograd does 2.25x fewer
// multiplications but pays for its transforms per channel and needs tiles to block over; oneDNN
// 2.6's AVX-512 Winograd measured 1.3-1.8x faster than direct in all three passes from 32
// channels, and at 16 channels faster only for the weight gradient (ResNet-32's 32x32 layers:
// 6.0 against 7.5 ms a step on an Intel Xeon with AMX, level on Zen 4; forward and data
// gradient up to 13% slower), never at batch 1 (docs/history/results-0.1.0.md). Where oneDNN has
// no Winograd (CPUs without AVX-512) the convolution stays direct.
bool PrefersWinograd(const ConvParams& p, const Shape& x, const Shape& w, const Shape& y,
                     Precision precision, ConvPass pass);

// Whether a convolution's `pass` runs as matrix products over channels-last rows (MatmulConv)
// rather than on oneDNN's convolutions: no dilation, groups or bias, bf16, on a CPU with AMX
// (`amx`: the operators pass CpuHasAmx()), and
//   - a 1x1 convolution without padding: the two gradient passes (the forward stays oneDNN's
//     brgconv_1x1);
//   - any other on a plane Y of at most 16 positions (ResNet-18's and ResNet-50's 4x4 layers
//     at 128 px): the forward pass and dX;
//   - any other with a stride above 1 on a plane of at most 64: dX and dW.
// oneDNN 2.6's older AMX convolution kernels, which every bf16 backward pass runs on, did the
// 1x1 layers' gradients at 60-150 GFLOP/s and the strided 3x3 ones' at 90-400, and its forward
// `brgconv` ran the 4x4 plane at 305-384 (1,400 at 32x32); its AMX matrix product does the same
// sums at 350-900 (docs/history/results-0.1.0.md). ResNet-50 at 128 px spent 242 ms a step in the
// 1x1 gradients, 107 as matrix products. ResNet-18's 4x4 layers at 128 px, batch 16, one
// thread: forward 3.1 against 2.3 ms and dX 4.0 against 3.2 plus the fold, their weight
// conversions two blocked against two plain (1.7 against 1.1 ms each); the strided 256-to-512
// layer's gradients 9.3 against 3.7. Their dW on a 4x4 plane stays AmxConvWeightGradient's
// (2.7 ms against the product's 3.1 and the unfolding), and 8x8 planes at stride 1 stay
// oneDNN's (256 channels: 2.4 against 3.4 ms plus the unfolding).
bool PrefersMatmul(const ConvParams& p, const Shape& y, bool bias, Precision precision,
                   ConvPass pass, bool amx);

// Whether ConvGradient computes dW on AMX tiles (AmxConvWeightGradient) rather than with
// oneDNN's backward-weights convolution: 3x3, stride 1, padding 1, no dilation, groups or bias
// gradient, channel counts multiples of 16, bf16, where this process may use AMX, and where the
// kernel's two packs take at most 4 MiB (AmxConvWeightGradient::PackBytes). Above that they
// leave the 2 MiB second-level cache of every AMX core and the kernel loses: one-convolution
// nets at batch 16 on an Intel Xeon with AMX (docs/history/results-0.1.0.md) ran it 0.52-0.97x
// oneDNN's time up to 3.75 MiB of packs (512 channels at 4x4 to 256 at 14x14), 1.31x at 4.26
// MiB (64 at 32x32) and 1.76-1.83x at 6.6-12.7 MiB (128 at 28x28, 64 at 56x56). The
// backward-data pass stays oneDNN's.
bool PrefersAmxWeightGradient(const ConvParams& p, const Shape& x, const Shape& w, bool want_bias,
                              Precision precision);

// Y = conv(X, W) + b on oneDNN, or as MatmulConv's product where PrefersMatmul says so. The
// primitive picks the activation and weight layouts (blocked; nhwc for bf16 on AMX); X is
// reordered only when it arrives in another layout, the plain W every run (cached reorder).
// In the context's precision bf16, X (unless it already is) and W are converted to bfloat16 in
// those reorders and Y is written in bfloat16, as ConvGradientOp writes dX (dW stays fp32).
class ConvOp final : public Operator<CPUContext> {
 public:
  ConvOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;
  // oneDNN's name for the primitive the latest run built ("jit_wino_4x3:avx512_core" is
  // Winograd; "matmul:" and its matmul's is MatmulConv): what shows that each path runs where
  // PrefersWinograd and PrefersMatmul ask for it.
  const std::string& implementation() const { return implementation_; }
  // The CPU's AMX fact that PrefersMatmul gets (CpuHasAmx()). A test sets it before the first
  // run to take MatmulConv's path on any CPU with bf16, where its products run without AMX.
  void set_amx(bool amx) { amx_ = amx; }

 private:
  void Build(const dnnl::memory::desc& x_md);
  const Tensor* Bias() { return InputSize() == 3 ? &Input(2) : nullptr; }

  ConvParams params_;
  bool amx_;
  std::optional<MatmulConv> matmul_;  // where PrefersMatmul
  dnnl::memory::desc y_md_;           // the layout the primitive picked
  Shape y_shape_;
  std::string implementation_;
  WeightedForwardPass forward_;
};

// (X, W, dY) -> (dW, db, dX). dW and db are plain; db and dX may be left unnamed, and without
// dX the backward-data pass does not run at all.
class ConvGradientOp final : public Operator<CPUContext> {
 public:
  ConvGradientOp(const OperatorDef& def, Workspace* ws, CPUContext* context);
  void Run() override;
  // As ConvOp::implementation, of the backward-weights and backward-data passes ("" for a pass
  // that does not run; AmxConvWeightGradient::kImplementation for ours).
  const std::string& weights_implementation() const { return weights_implementation_; }
  const std::string& data_implementation() const { return data_implementation_; }
  // As ConvOp::set_amx.
  void set_amx(bool amx) { amx_ = amx; }

 private:
  void Build(const dnnl::memory::desc& x_md, const dnnl::memory::desc& dy_md);
  void BackwardData(const Tensor& w, const dnnl::memory& dy);

  ConvParams params_;
  bool amx_;
  bool want_weights_, want_bias_, want_data_;
  bool share_dy_ = false;  // both passes take dY in the same layout: reorder it once
  dnnl::memory::desc x_md_, dy_md_, dx_md_, w_plain_md_;
  // Layouts the backward-weights (bw_) and backward-data (bd_) primitives picked.
  dnnl::memory::desc bw_x_md_, bw_dy_md_, bd_w_md_, bd_dy_md_;
  Shape w_shape_;
  WeightGradientPass weights_;
  dnnl::convolution_backward_data data_primitive_;
  std::string weights_implementation_, data_implementation_;
  ReorderCache x_for_weights_, dy_for_weights_, w_for_data_, dy_for_data_;
  std::optional<MatmulConv> matmul_;  // for the passes where PrefersMatmul
  bool matmul_weights_ = false, matmul_data_ = false;
  std::optional<AmxConvWeightGradient> amx_weights_;  // where PrefersAmxWeightGradient
};

}  // namespace crossbow
