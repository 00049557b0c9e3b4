#include "operators/matmul_conv.h"

#include <immintrin.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "crossbow/core/bfloat16.h"
#include "crossbow/core/per_isa.h"
#include "crossbow/core/precision.h"
#include "operators/element_type.h"
#include "operators/parallel_threshold.h"

namespace crossbow {

using namespace dnnl_utils;

namespace {

dnnl::matmul::primitive_desc Product(const memory::desc& a, const memory::desc& b,
                                     const memory::desc& c, const dnnl::engine& engine) {
  return {dnnl::matmul::desc(a, b, c), Attributes(), engine};
}

std::string Named(const dnnl::matmul::primitive_desc& pd) {
  return std::string("matmul:") + pd.impl_info_str();
}

using Geometry = MatmulConv::Geometry;

// A row of Xu from channel `first_channel` on: for each tap t, the C values at `taps[t]` (null:
// the padding, zeros) placed at t, t + T, t + 2T, ... (T taps).
template <class T>
void InterleaveTaps(const T* const* taps, int64_t tap_count, int64_t c, int64_t first_channel,
                    T* row) {
  for (int64_t t = 0; t < tap_count; ++t) {
    T* out = row + t;
    if (taps[t] == nullptr) {
      for (int64_t ch = first_channel; ch < c; ++ch) out[ch * tap_count] = T{};
    } else if (tap_count == 1) {
      std::memcpy(out + first_channel, taps[t] + first_channel, (c - first_channel) * sizeof(T));
    } else {
      for (int64_t ch = first_channel; ch < c; ++ch) out[ch * tap_count] = taps[t][ch];
    }
  }
}

// For a block of 32 channels and 9 taps, 288 values in 9 registers: lane l of register j,
// the block's value e = 32 j + l, is channel e / 9 of tap e % 9.
struct Interleave9 {
  Interleave9() {
    for (int j = 0; j < 9; ++j) {
      for (int lane = 0; lane < 32; ++lane) {
        const int e = 32 * j + lane;
        channel[j][lane] = static_cast<uint16_t>(e / 9);
        mask[j][e % 9] |= __mmask32{1} << lane;
      }
    }
  }
  alignas(64) uint16_t channel[9][32];
  __mmask32 mask[9][9] = {};
};

// InterleaveTaps for bfloat16 and 9 taps (3x3), 32 channels at a time: each register of the
// block takes its lanes from the 9 taps' registers by masked permutes. Returns the channels it
// placed.
CROSSBOW_AVX512 int64_t InterleaveTaps9(const uint16_t* const* taps, int64_t c, uint16_t* row) {
  static const Interleave9 table;
  int64_t ch = 0;
  for (; ch + 32 <= c; ch += 32) {
    __m512i source[9];
    for (int t = 0; t < 9; ++t)
      source[t] = taps[t] == nullptr ? _mm512_setzero_si512() : _mm512_loadu_si512(taps[t] + ch);
    for (int j = 0; j < 9; ++j) {
      const __m512i channel = _mm512_load_si512(table.channel[j]);
      __m512i out = _mm512_setzero_si512();
      for (int t = 0; t < 9; ++t)
        out = _mm512_mask_permutexvar_epi16(out, table.mask[j][t], channel, source[t]);
      _mm512_storeu_si512(row + ch * 9 + 32 * j, out);
    }
  }
  return ch;
}

template <class T>
void UnfoldRow(const T* const* taps, int64_t tap_count, int64_t c, T* row) {
  int64_t done = 0;
  if constexpr (std::is_same_v<T, uint16_t>) {
    if (tap_count == 9 && CpuHasAvx512()) done = InterleaveTaps9(taps, c, row);
  }
  InterleaveTaps(taps, tap_count, c, done, row);
}

// sum[ch] += read[ch * T] over the reads (T taps), a channel's taps being T values apart.
void SumTaps(const std::vector<const float*>& reads, int64_t tap_count, int64_t c, float* sum) {
  for (const float* in : reads) {
    if (tap_count == 1) {
      for (int64_t ch = 0; ch < c; ++ch) sum[ch] += in[ch];
    } else {
      for (int64_t ch = 0; ch < c; ++ch) sum[ch] += in[ch * tap_count];
    }
  }
}

template <class T>
void UnfoldLoop(const Geometry& g, const T* x, T* xu) {
  const int64_t tap_count = g.kernel * g.kernel, depth = g.c * tap_count;
#pragma omp parallel if (g.n * g.oh * g.ow * depth >= kMinParallelElements)
  {
    std::vector<const T*> taps(tap_count);
#pragma omp for schedule(static) collapse(3)
    for (int64_t b = 0; b < g.n; ++b) {
      for (int64_t i = 0; i < g.oh; ++i) {
        for (int64_t j = 0; j < g.ow; ++j) {
          for (int64_t u = 0; u < g.kernel; ++u) {
            for (int64_t v = 0; v < g.kernel; ++v) {
              const int64_t y = i * g.stride - g.pad + u, x_col = j * g.stride - g.pad + v;
              const bool inside = y >= 0 && y < g.h && x_col >= 0 && x_col < g.w;
              taps[u * g.kernel + v] = inside ? x + ((b * g.h + y) * g.w + x_col) * g.c : nullptr;
            }
          }
          UnfoldRow(taps.data(), tap_count, g.c, xu + ((b * g.oh + i) * g.ow + j) * depth);
        }
      }
    }
  }
}

// dX[b, y, x, :] = the sum of dXu's entries that read X[b, y, x, :]: a gather per input
// position, summed in fp32 and rounded once.
template <class T>
void FoldLoop(const Geometry& g, const float* dxu, T* dx) {
  const int64_t tap_count = g.kernel * g.kernel, depth = g.c * tap_count;
#pragma omp parallel if (g.n * g.h * g.w * depth >= kMinParallelElements)
  {
    std::vector<float> sum(g.c);
    std::vector<const float*> reads;
#pragma omp for schedule(static) collapse(3)
    for (int64_t b = 0; b < g.n; ++b) {
      for (int64_t y = 0; y < g.h; ++y) {
        for (int64_t x_col = 0; x_col < g.w; ++x_col) {
          reads.clear();
          for (int64_t u = 0; u < g.kernel; ++u) {
            const int64_t i_stride = y + g.pad - u, i = i_stride / g.stride;
            if (i_stride < 0 || i_stride % g.stride != 0 || i >= g.oh) continue;
            for (int64_t v = 0; v < g.kernel; ++v) {
              const int64_t j_stride = x_col + g.pad - v, j = j_stride / g.stride;
              if (j_stride < 0 || j_stride % g.stride != 0 || j >= g.ow) continue;
              reads.push_back(dxu + ((b * g.oh + i) * g.ow + j) * depth + u * g.kernel + v);
            }
          }
          std::fill(sum.begin(), sum.end(), 0.f);
          SumTaps(reads, tap_count, g.c, sum.data());
          T* out = dx + ((b * g.h + y) * g.w + x_col) * g.c;
          for (int64_t ch = 0; ch < g.c; ++ch) out[ch] = FromFloat<T>(sum[ch]);
        }
      }
    }
  }
}

}  // namespace

void MatmulConv::Build(int64_t stride, int64_t pad, const Shape& x, const Shape& w, const Shape& y,
                       memory::data_type type, const std::vector<ConvPass>& passes,
                       CPUContext* ctx) {
  const int64_t n = x[0], c = x[1], m = w[0], kernel = w[2], oh = y[2], ow = y[3];
  g_ = {n, x[2], x[3], c, oh, ow, kernel, stride, pad};
  x_shape_ = x;
  w_shape_ = w;
  y_shape_ = y;
  const int64_t rows = n * oh * ow, depth = c * kernel * kernel;
  x_nhwc_ = ChannelsLastDesc(Dims(x), type);
  y_nhwc_ = ChannelsLastDesc(Dims(y_shape_), type);
  xu_ = memory::desc({rows, depth}, type, {depth, 1});
  dy_ = memory::desc({rows, m}, type, {m, 1});
  dy_t_ = memory::desc({m, rows}, type, {1, m});
  w_plain_ = memory::desc({m, depth}, memory::data_type::f32, {depth, 1});
  w_ = memory::desc({m, depth}, type, {depth, 1});
  w_t_ = memory::desc({depth, m}, type, {1, depth});
  dxu_ = Unfolded() ? xu_ : memory::desc({rows, depth}, memory::data_type::f32, {depth, 1});
  const dnnl::engine& engine = ctx->engine();
  for (const ConvPass pass : passes) {
    if (pass == ConvPass::kForward) {
      const auto product = Product(xu_, w_t_, dy_, engine);
      forward_implementation = Named(product);
      forward_product_ = dnnl::matmul(product);
    } else if (pass == ConvPass::kBackwardWeights) {
      const auto product = Product(dy_t_, xu_, w_plain_, engine);
      weights_implementation = Named(product);
      weights_product_ = dnnl::matmul(product);
    } else {
      const auto product = Product(dy_, w_, dxu_, engine);
      data_implementation = Named(product);
      data_product_ = dnnl::matmul(product);
    }
  }
}

const Tensor& MatmulConv::Unfold(const Tensor& x_nhwc) {
  if (Unfolded()) return x_nhwc;
  xu_scratch_.ResizeBlocked({xu_.dims()[0], xu_.dims()[1]}, xu_);
  WithElementType(x_nhwc, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    UnfoldLoop(g_, Elements<T>(x_nhwc), Elements<T>(&xu_scratch_));
  });
  return xu_scratch_;
}

void MatmulConv::Fold(Tensor* dx) const {
  WithElementType(*dx, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    FoldLoop(g_, dxu_scratch_.data<float>(), Elements<T>(dx));
  });
}

memory MatmulConv::Weights(const Tensor& w, CPUContext* ctx) {
  return w_to_type_.Convert(w, w_plain_, w_, ctx);
}

void MatmulConv::Forward(const Tensor& x, const Tensor& w, Tensor* y, CPUContext* ctx) {
  const Tensor& xu = Unfold(x_to_nhwc_.As(x, x_nhwc_, &x_nhwc_scratch_, ctx));
  const memory weights = Weights(w, ctx);
  ResizeTo(y, y_shape_, y_nhwc_);
  Execute(forward_product_,
          {{DNNL_ARG_SRC, Wrap(xu, xu_, ctx)},
           {DNNL_ARG_WEIGHTS, memory(w_t_, ctx->engine(), weights.get_data_handle())},
           {DNNL_ARG_DST, Wrap(*y, dy_, ctx)}},
          ctx);
}

void MatmulConv::Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dw,
                          Tensor* dx, CPUContext* ctx) {
  const Tensor& dy_nhwc = dy_to_nhwc_.As(dy, y_nhwc_, &dy_nhwc_scratch_, ctx);
  if (dw != nullptr) {
    const Tensor& xu = Unfold(x_to_nhwc_.As(x, x_nhwc_, &x_nhwc_scratch_, ctx));
    dw->Resize(w_shape_);
    Execute(weights_product_,
            {{DNNL_ARG_SRC, Wrap(dy_nhwc, dy_t_, ctx)},
             {DNNL_ARG_WEIGHTS, Wrap(xu, xu_, ctx)},
             {DNNL_ARG_DST, Wrap(*dw, w_plain_, ctx)}},
            ctx);
  }
  if (dx == nullptr) return;
  const memory weights = Weights(w, ctx);
  ResizeTo(dx, x_shape_, x_nhwc_);
  if (!Unfolded()) dxu_scratch_.Resize({dxu_.dims()[0], dxu_.dims()[1]});
  Execute(data_product_,
          {{DNNL_ARG_SRC, Wrap(dy_nhwc, dy_, ctx)},
           {DNNL_ARG_WEIGHTS, weights},
           {DNNL_ARG_DST, Wrap(Unfolded() ? *dx : dxu_scratch_, dxu_, ctx)}},
          ctx);
  if (!Unfolded()) Fold(dx);
}

}  // namespace crossbow
