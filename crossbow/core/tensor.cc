#include "crossbow/core/tensor.h"

#include <cstdlib>
#include <limits>
#include <sstream>

#include "crossbow/core/batch_as_n.h"

namespace crossbow {

size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::kFloat32:
    case DataType::kInt32:
      return 4;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return 2;
    case DataType::kInt64:
      return 8;
    case DataType::kUInt8:
      return 1;
  }
  CROSSBOW_FAIL("unknown dtype ", static_cast<int>(type));
}

const char* DataTypeName(DataType type) {
  switch (type) {
    case DataType::kFloat32:
      return "float32";
    case DataType::kFloat16:
      return "float16";
    case DataType::kBFloat16:
      return "bfloat16";
    case DataType::kInt32:
      return "int32";
    case DataType::kInt64:
      return "int64";
    case DataType::kUInt8:
      return "uint8";
  }
  return "unknown";
}

template <>
DataType DataTypeOf<float>() {
  return DataType::kFloat32;
}
template <>
DataType DataTypeOf<int32_t>() {
  return DataType::kInt32;
}
template <>
DataType DataTypeOf<int64_t>() {
  return DataType::kInt64;
}
template <>
DataType DataTypeOf<uint8_t>() {
  return DataType::kUInt8;
}

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {
// No dimension, nor a reshape's -1 or 0, equals it.
thread_local int64_t batch_printed_as_n = std::numeric_limits<int64_t>::min();
}  // namespace

ScopedBatchAsN::ScopedBatchAsN(int64_t batch) : previous_(batch_printed_as_n) {
  batch_printed_as_n = batch;
}

ScopedBatchAsN::~ScopedBatchAsN() { batch_printed_as_n = previous_; }

std::string ShapeString(const Shape& shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    out << (i ? ", " : "");
    if (i == 0 && shape[0] == batch_printed_as_n) {
      out << "N";
    } else {
      out << shape[i];
    }
  }
  out << "]";
  return out.str();
}

int64_t Tensor::dim(int i) const {
  CROSSBOW_ENFORCE(i >= 0 && i < ndim(), "dimension ", i, " out of range for shape ",
                   ShapeString(shape_));
  return shape_[i];
}

size_t Tensor::nbytes() const {
  if (blocked_) return layout_.get_size();
  return static_cast<size_t>(numel()) * DataTypeSize(dtype_);
}

void Tensor::Resize(const Shape& shape, DataType dtype) {
  for (int64_t d : shape)
    CROSSBOW_ENFORCE_VALUE(d >= 0, "negative dimension in ", ShapeString(shape));
  shape_ = shape;
  dtype_ = dtype;
  blocked_ = false;
  layout_ = dnnl::memory::desc();
  Reserve(nbytes());
}

DataType FromDnnlType(dnnl::memory::data_type type) {
  switch (type) {
    case dnnl::memory::data_type::s32:
      return DataType::kInt32;
    case dnnl::memory::data_type::u8:
      return DataType::kUInt8;
    case dnnl::memory::data_type::bf16:
      return DataType::kBFloat16;
    case dnnl::memory::data_type::f16:
      return DataType::kFloat16;
    default:
      return DataType::kFloat32;
  }
}

dnnl::memory::data_type ToDnnlType(DataType type) {
  switch (type) {
    case DataType::kInt32:
      return dnnl::memory::data_type::s32;
    case DataType::kUInt8:
      return dnnl::memory::data_type::u8;
    case DataType::kBFloat16:
      return dnnl::memory::data_type::bf16;
    case DataType::kFloat16:
      return dnnl::memory::data_type::f16;
    case DataType::kFloat32:
      return dnnl::memory::data_type::f32;
    default:
      throw ValueError(detail::Concat("oneDNN has no type for ", DataTypeName(type), " tensors"));
  }
}

void Tensor::ResizeBlocked(const Shape& shape, const dnnl::memory::desc& layout) {
  CROSSBOW_ENFORCE(is_cpu(), "blocked layouts exist on the CPU only; tensor is on ",
                   device_.ToString());
  shape_ = shape;
  dtype_ = FromDnnlType(layout.data_type());
  blocked_ = true;
  layout_ = layout;
  Reserve(nbytes());
}

void Tensor::ResizeLike(const Tensor& other) {
  if (other.blocked_ && is_cpu()) {
    ResizeBlocked(other.shape_, other.layout_);
  } else {
    Resize(other.shape_, other.dtype_);
  }
}

void Tensor::BindStorage(std::shared_ptr<uint8_t> buffer, size_t capacity) {
  storage_ = std::move(buffer);
  capacity_ = capacity;
  bound_ = true;
}

void Tensor::Reserve(size_t bytes) {
  if (storage_ && bytes <= capacity_) return;
  CROSSBOW_ENFORCE(!bound_, "tensor of shape ", ShapeString(shape_), " needs ", bytes,
                   " bytes but its planned buffer holds ", capacity_);
  storage_ = AllocateOn(device_, bytes);
  capacity_ = bytes;
}

void Tensor::CheckType(DataType expected) const {
  CROSSBOW_ENFORCE_VALUE(dtype_ == expected, "tensor holds ", DataTypeName(dtype_),
                         " but was read as ", DataTypeName(expected));
}

void CopyTensor(const Tensor& src, Tensor* dst) {
  CROSSBOW_ENFORCE(src.is_plain() || dst->is_cpu(), "a blocked ", src.DebugString(),
                   " cannot be copied to ", dst->device().ToString(),
                   "; reorder it to plain first");
  dst->ResizeLike(src);
  CopyBytes(dst->raw_data(), dst->device(), src.raw_data(), src.device(), src.nbytes());
}

Tensor ToHost(const Tensor& t) {
  Tensor host;
  CopyTensor(t, &host);
  return host;
}

std::string Tensor::DebugString() const {
  std::ostringstream out;
  out << DataTypeName(dtype_) << ShapeString(shape_) << (blocked_ ? " blocked" : "");
  if (!is_cpu()) out << " on " << device_.ToString();
  return out.str();
}

}  // namespace crossbow
