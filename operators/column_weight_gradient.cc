#include "operators/column_weight_gradient.h"

#include <cstring>

#include "operators/parallel_threshold.h"

namespace crossbow {

using namespace dnnl_utils;
using tag = memory::format_tag;

void ColumnWeightGradient::Build(int64_t stride, int64_t pad, const Shape& x, const Shape& w,
                                 const Shape& y, memory::data_type type, CPUContext* ctx) {
  const int64_t m = w[0], k = w[2], rows = y[0] * y[2] * y[3], columns = k * k * x[1];
  stride_ = stride;
  pad_ = pad;
  channel_bytes_ = x[1] * dnnl_data_type_size(static_cast<dnnl_data_type_t>(type));
  x_shape_ = x;
  w_shape_ = w;
  y_shape_ = y;
  x_nhwc_ = memory::desc(Dims(x), type, tag::acdb);
  dy_nhwc_ = memory::desc(Dims(y), type, tag::acdb);
  dy_t_ = memory::desc({m, rows}, type, {1, m});
  col_shape_ = {rows, columns};
  col_ = memory::desc(Dims(col_shape_), type, {columns, 1});
  dw_ohwi_ = memory::desc({m, columns}, memory::data_type::f32, {columns, 1});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(dy_t_, col_, dw_ohwi_), Attributes(),
                                        ctx->engine());
  implementation = pd.impl_info_str();
  product_ = dnnl::matmul(pd);
}

// Row (b, i, j) of Col, kernel row u: the k positions X[b, i*s+u-p, j*s-p .. j*s-p+k-1] are
// consecutive in nhwc, so each kernel row is one copy of up to k*C values, zeros at the edges.
void ColumnWeightGradient::GatherPatches(const char* x, char* col) const {
  const int64_t n = x_shape_[0], h = x_shape_[2], w = x_shape_[3];
  const int64_t oh = y_shape_[2], ow = y_shape_[3], k = w_shape_[2];
  const int64_t c = static_cast<int64_t>(channel_bytes_);
  const int64_t bytes = n * oh * ow * k * k * c;
#pragma omp parallel for schedule(static) collapse(2) if (bytes >= kMinParallelElements)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        char* row = col + ((b * oh + i) * ow + j) * k * k * c;
        const int64_t left = j * stride_ - pad_;
        // The kernel columns [first, last) that fall inside the image.
        const int64_t first = std::max<int64_t>(0, -left), last = std::min(k, w - left);
        for (int64_t u = 0; u < k; ++u) {
          char* to = row + u * k * c;
          const int64_t top = i * stride_ + u - pad_;
          if (top < 0 || top >= h || first >= last) {
            std::memset(to, 0, k * c);
            continue;
          }
          std::memset(to, 0, first * c);
          std::memcpy(to + first * c, x + ((b * h + top) * w + left + first) * c,
                      (last - first) * c);
          std::memset(to + last * c, 0, (k - last) * c);
        }
      }
    }
  }
}

void ColumnWeightGradient::Run(const Tensor& x, const Tensor& dy, Tensor* dw, CPUContext* ctx) {
  const Tensor& x_nhwc = x_to_nhwc_.As(x, x_nhwc_, &x_nhwc_scratch_, ctx);
  const Tensor& dy_nhwc = dy_to_nhwc_.As(dy, dy_nhwc_, &dy_nhwc_scratch_, ctx);
  const int64_t m = w_shape_[0], c = w_shape_[1], kk = w_shape_[2] * w_shape_[3];
  col_scratch_.ResizeBlocked(col_shape_, col_);
  GatherPatches(static_cast<const char*>(x_nhwc.raw_data()),
                static_cast<char*>(col_scratch_.raw_data()));
  dw_ohwi_scratch_.Resize({m, kk * c});
  Execute(product_,
          {{DNNL_ARG_SRC, Wrap(dy_nhwc, dy_t_, ctx)},
           {DNNL_ARG_WEIGHTS, Wrap(col_scratch_, col_, ctx)},
           {DNNL_ARG_DST, Wrap(dw_ohwi_scratch_, dw_ohwi_, ctx)}},
          ctx);
  dw->Resize(w_shape_);
  const float* from = dw_ohwi_scratch_.data<float>();
  float* to = dw->mutable_data<float>();
  for (int64_t o = 0; o < m; ++o) {
    for (int64_t t = 0; t < kk; ++t) {
      for (int64_t i = 0; i < c; ++i) to[(o * c + i) * kk + t] = from[(o * kk + t) * c + i];
    }
  }
}

}  // namespace crossbow
