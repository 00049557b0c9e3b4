#include "operators/dnnl_utils.h"

#include <glog/logging.h>

#include <cstring>

namespace crossbow::dnnl_utils {

memory::dims Dims(const Shape& shape) { return memory::dims(shape.begin(), shape.end()); }

memory::desc PlainDesc(const Shape& shape, memory::data_type type) {
  memory::dims strides(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return memory::desc(Dims(shape), type, strides);
}

memory::desc DescOf(const Tensor& t) {
  return t.is_plain() ? PlainDesc(t.shape(), ToDnnlType(t.dtype())) : t.layout();
}

memory::desc AnyDesc(const Shape& shape, memory::data_type type) {
  return memory::desc(Dims(shape), type, memory::format_tag::any);
}

memory::desc WithType(const memory::desc& md, memory::data_type type) {
  dnnl_memory_desc_t raw = md.data;
  raw.data_type = static_cast<dnnl_data_type_t>(type);
  return memory::desc(raw);
}

bool IsPlain(const memory::desc& md, const Shape& shape) {
  return md == PlainDesc(shape, md.data_type());
}

memory::desc ChannelsLastDesc(const memory::dims& dims, memory::data_type type) {
  return memory::desc(dims, type, memory::format_tag::acdb);
}

bool IsChannelsLast(const memory::desc& md) {
  return md == ChannelsLastDesc(md.dims(), md.data_type());
}

void ResizeTo(Tensor* t, const Shape& shape, const memory::desc& md) {
  if (IsPlain(md, shape)) {
    t->Resize(shape, FromDnnlType(md.data_type()));
  } else {
    t->ResizeBlocked(shape, md);
  }
}

memory Wrap(const Tensor& t, const memory::desc& md, CPUContext* ctx) {
  return memory(md, ctx->engine(), const_cast<void*>(t.raw_data()));
}

dnnl::primitive_attr Attributes() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void Execute(const dnnl::primitive& primitive, std::unordered_map<int, memory> args,
             CPUContext* ctx) {
  const_dnnl_primitive_desc_t pd = primitive.get_primitive_desc();
  const_dnnl_primitive_attr_t attr = nullptr;
  dnnl_scratchpad_mode_t mode = dnnl_scratchpad_mode_library;
  dnnl_primitive_desc_get_attr(pd, &attr);
  dnnl_primitive_attr_get_scratchpad_mode(attr, &mode);
  CHECK_EQ(mode, dnnl_scratchpad_mode_user) << "a primitive created without Attributes()";
  const memory::desc scratchpad(*dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0));
  if (const size_t bytes = scratchpad.get_size(); bytes > 0) {
    args[DNNL_ARG_SCRATCHPAD] = memory(scratchpad, ctx->engine(), ctx->Scratchpad(bytes));
  }
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
  if (src.is_plain() && src.dtype() == DataType::kFloat32) {
    std::memcpy(out, src.raw_data(), src.nbytes());
    return;
  }
  memory from = Wrap(src, ctx);
  memory to(PlainDesc(src.shape()), ctx->engine(), out);
  dnnl::reorder(from, to).execute(ctx->stream(), from, to);
  ctx->stream().wait();
}

}  // namespace crossbow::dnnl_utils
