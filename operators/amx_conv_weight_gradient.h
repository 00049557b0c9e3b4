#pragma once

#include <vector>

#include "operators/reorder_cache.h"

namespace crossbow {

// Whether this process may use AMX tiles: the CPU has them and Linux granted their state
// (asked once, as every AMX user must).
bool AmxTilesGranted();

// The weight gradient of a 3x3 convolution with stride 1 and padding 1 (no dilation, groups or
// bias), channel counts multiples of 16, in bfloat16 on AMX tiles, where oneDNN 2.6's AMX
// backward-weights kernels ran ResNet-32's layers at 78-266 GFLOP/s
// (docs/history/results-0.1.0.md).
//
// Each image's positions are laid out flat, row after row, with one zero column after each
// row. Then the neighbour (u-1, v-1) of flat position f is f + (u-1)(W+1) + (v-1), the padding
// included, and for each kernel offset (u, v)
//   dW[:, :, u, v] = sum over images and f of dY^T[:, f] X[f + shift(u, v), :]
// with dY zero at the padding: one product of dY^T [M, K] and X [K, C] read at an offset. AMX's
// bf16 product sums pairs of consecutive K values, interleaved in its right operand (VNNI):
// here the pairs are the same position of two images, so that every shift starts at a pair
// and every tile row is one aligned 64-byte line. Per run dY^T is packed, and X with each
// position's two images interleaved. The products cover the padding column too, 1.03-1.25x
// the positions at 32x32-8x8.
// ConvGradient runs it where PrefersAmxWeightGradient (conv_op.h) says so.
class AmxConvWeightGradient {
 public:
  // For X [N, C, H, W] and W [M, C, 3, 3]; X and dY arrive in any layout and type.
  void Build(const Shape& x, const Shape& w);
  // Bytes of the two packs a run for X and W writes (dY^T and X's pairs): the products read
  // dY^T once per 16 input channels and X once per 16 output channels, so they run at the
  // second-level cache's speed only while the packs stay in it.
  static int64_t PackBytes(const Shape& x, const Shape& w);
  void Run(const Tensor& x, const Tensor& dy, Tensor* dw, CPUContext* ctx);
  static constexpr const char* kImplementation = "crossbow:amx_3x3_weight_gradient";

 private:
  void PackDyT(const uint16_t* dy);
  // 16 positions from `first` of images 2 pair and 2 pair + 1, channels block*16 on.
  void PackDyTChunk(const uint16_t* dy, int64_t block, int64_t pair, int64_t first);
  void PackXPairs(const uint16_t* x);
  void PackXRow(const uint16_t* x, int64_t pair, int64_t i);
  void Products(float* dw) const;
  // Values between consecutive rows of dY^T (one output channel's), and of X's pairs (one
  // flat position's).
  int64_t DyTRow() const { return flat_.image_pairs * flat_.plane * 2; }
  int64_t XRow() const { return c_ * 2; }

  int64_t n_ = 0, c_ = 0, h_ = 0, w_ = 0, m_ = 0;
  // The flat layout's sizes for X [N, C, H, W].
  struct FlatGeometry {
    FlatGeometry() = default;
    explicit FlatGeometry(const Shape& x);
    int64_t image_pairs = 0;  // N/2 rounded up: an odd N's last pair has a zero image
    int64_t row = 0;          // W + 1: a row of the flat layout
    int64_t plane = 0;        // dY^T's flat positions per image, H rows rounded up to 16
    int64_t lead = 0;         // X's flat positions before dY's first: the largest shift back
    int64_t x_plane = 0;      // X's flat positions per image: lead, plane and the shift ahead
  };
  FlatGeometry flat_;
  Shape w_shape_;
  dnnl::memory::desc x_nhwc_, dy_nhwc_;
  uint16_t* dy_t_ = nullptr;     // dY^T [M, N/2, plane, 2], bf16, 64-byte aligned
  uint16_t* x_pairs_ = nullptr;  // X's pairs [N/2, x_plane, C, 2]
  ReorderCache x_to_nhwc_, dy_to_nhwc_;
  Tensor x_nhwc_scratch_, dy_nhwc_scratch_;
};

}  // namespace crossbow
