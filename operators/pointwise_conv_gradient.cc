#include "operators/pointwise_conv_gradient.h"

#include <cstring>

#include "operators/parallel_threshold.h"

namespace crossbow {

using namespace dnnl_utils;
using tag = memory::format_tag;

namespace {

// Copies the C values of every position (n, i, j) that a stride samples from an nhwc tensor
// [N, H, W, C], `channel_bytes` each, between it and the packed [N, OH, OW, C]: from the full
// tensor to the packed one where `gather`, else back.
void CopySampled(const Shape& x, int64_t stride, size_t channel_bytes, const char* from, char* to,
                 bool gather) {
  const int64_t n = x[0], h = x[2], w = x[3];
  const int64_t oh = (h - 1) / stride + 1, ow = (w - 1) / stride + 1;
  const int64_t bytes = n * oh * ow * static_cast<int64_t>(channel_bytes);
#pragma omp parallel for schedule(static) collapse(2) if (bytes >= kMinParallelElements)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t full = ((b * h + i * stride) * w + j * stride) * channel_bytes;
        const int64_t packed = ((b * oh + i) * ow + j) * channel_bytes;
        std::memcpy(to + (gather ? packed : full), from + (gather ? full : packed), channel_bytes);
      }
    }
  }
}

dnnl::matmul::primitive_desc Product(const memory::desc& a, const memory::desc& b,
                                     const memory::desc& c, const dnnl::engine& engine) {
  return {dnnl::matmul::desc(a, b, c), Attributes(), engine};
}

}  // namespace

void PointwiseConvGradient::Build(int64_t stride, const Shape& x, const Shape& w,
                                  memory::data_type type, CPUContext* ctx) {
  const int64_t n = x[0], c = x[1], h = x[2], wd = x[3], m = w[0];
  const int64_t oh = (h - 1) / stride + 1, ow = (wd - 1) / stride + 1, rows = n * oh * ow;
  stride_ = stride;
  channel_bytes_ = c * dnnl_data_type_size(static_cast<dnnl_data_type_t>(type));
  x_shape_ = x;
  w_shape_ = w;
  xs_shape_ = {n, c, oh, ow};
  x_nhwc_ = ChannelsLastDesc(Dims(x), type);
  dy_nhwc_ = ChannelsLastDesc({n, m, oh, ow}, type);
  xs_nhwc_ = ChannelsLastDesc(Dims(xs_shape_), type);
  dy_t_ = memory::desc({m, rows}, type, {1, m});
  xs_ = memory::desc({rows, c}, type, {c, 1});
  dw_ = memory::desc({m, c}, memory::data_type::f32, {c, 1});
  const auto weights = Product(dy_t_, xs_, dw_, ctx->engine());
  weights_implementation = weights.impl_info_str();
  weights_product_ = dnnl::matmul(weights);
  dy_ = memory::desc({rows, m}, type, {m, 1});
  // W [M, C] is read as the plain fp32 dW is laid out, and dXs written as Xs is read.
  const auto data = Product(dy_, memory::desc({m, c}, type, tag::any), xs_, ctx->engine());
  data_implementation = data.impl_info_str();
  w_product_ = data.weights_desc();
  data_product_ = dnnl::matmul(data);
}

void PointwiseConvGradient::Run(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dw,
                                Tensor* dx, CPUContext* ctx) {
  const Tensor& dy_nhwc = dy_to_nhwc_.As(dy, dy_nhwc_, &dy_nhwc_scratch_, ctx);
  if (dw != nullptr) {
    const Tensor* xs = &x_to_nhwc_.As(x, x_nhwc_, &x_nhwc_scratch_, ctx);
    if (stride_ > 1) {
      xs_scratch_.ResizeBlocked(xs_shape_, xs_nhwc_);
      CopySampled(x_shape_, stride_, channel_bytes_, static_cast<const char*>(xs->raw_data()),
                  static_cast<char*>(xs_scratch_.raw_data()), /*gather=*/true);
      xs = &xs_scratch_;
    }
    dw->Resize(w_shape_);
    Execute(weights_product_,
            {{DNNL_ARG_SRC, Wrap(dy_nhwc, dy_t_, ctx)},
             {DNNL_ARG_WEIGHTS, Wrap(*xs, xs_, ctx)},
             {DNNL_ARG_DST, Wrap(*dw, dw_, ctx)}},
            ctx);
  }
  if (dx != nullptr) BackwardData(w, dy_nhwc, dx, ctx);
}

void PointwiseConvGradient::BackwardData(const Tensor& w, const Tensor& dy, Tensor* dx,
                                         CPUContext* ctx) {
  w_scratch_.ResizeBlocked({w_shape_[0], w_shape_[1]}, w_product_);
  w_to_product_.Run(w, dw_, &w_scratch_, w_product_, ctx);
  ResizeTo(dx, x_shape_, x_nhwc_);
  Tensor* dxs = dx;
  if (stride_ > 1) {
    dxs_scratch_.ResizeBlocked(xs_shape_, xs_nhwc_);
    dxs = &dxs_scratch_;
  }
  Execute(data_product_,
          {{DNNL_ARG_SRC, Wrap(dy, dy_, ctx)},
           {DNNL_ARG_WEIGHTS, Wrap(w_scratch_, w_product_, ctx)},
           {DNNL_ARG_DST, Wrap(*dxs, xs_, ctx)}},
          ctx);
  if (stride_ > 1) {
    // The positions between the samples had no part in Y.
    std::memset(dx->raw_data(), 0, dx->nbytes());
    CopySampled(x_shape_, stride_, channel_bytes_,
                static_cast<const char*>(dxs_scratch_.raw_data()),
                static_cast<char*>(dx->raw_data()), /*gather=*/false);
  }
}

}  // namespace crossbow
