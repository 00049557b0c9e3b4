#include "operators/dnnl_utils.h"

#include <cstring>

namespace crossbow::dnnl_utils {

memory::dims Dims(const Shape& shape) { return memory::dims(shape.begin(), shape.end()); }

memory::desc PlainDesc(const Shape& shape) {
  memory::dims strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return memory::desc(Dims(shape), memory::data_type::f32, strides);
}

memory::desc DescOf(const Tensor& t) { return t.is_plain() ? PlainDesc(t.shape()) : t.layout(); }

memory::desc AnyDesc(const Shape& shape, memory::data_type type) {
  return memory::desc(Dims(shape), type, memory::format_tag::any);
}

bool IsPlain(const memory::desc& md, const Shape& shape) { return md == PlainDesc(shape); }

void ResizeTo(Tensor* t, const Shape& shape, const memory::desc& md) {
  if (IsPlain(md, shape)) {
    t->Resize(shape);
  } else {
    t->ResizeBlocked(shape, md);
  }
}

memory Wrap(const Tensor& t, const memory::desc& md, CPUContext* ctx) {
  return memory(md, ctx->engine(), const_cast<void*>(t.raw_data()));
}

void Execute(const dnnl::primitive& primitive, const std::unordered_map<int, memory>& args,
             CPUContext* ctx) {
  primitive.execute(ctx->stream(), args);
  ctx->stream().wait();
}

void ReorderTo(const Tensor& src, const memory::desc& md, Tensor* dst, CPUContext* ctx) {
  ResizeTo(dst, src.shape(), md);
  memory from = Wrap(src, ctx);
  memory to = Wrap(*dst, md, ctx);
  dnnl::reorder(from, to).execute(ctx->stream(), from, to);
  ctx->stream().wait();
}

void CopyToPlain(const Tensor& src, float* out, CPUContext* ctx) {
  if (src.is_plain()) {
    std::memcpy(out, src.raw_data(), src.nbytes());
    return;
  }
  memory from = Wrap(src, ctx);
  memory to(PlainDesc(src.shape()), ctx->engine(), out);
  dnnl::reorder(from, to).execute(ctx->stream(), from, to);
  ctx->stream().wait();
}

}  // namespace crossbow::dnnl_utils
