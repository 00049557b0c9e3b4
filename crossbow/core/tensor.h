#pragma once

#include <cstdint>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "crossbow/core/device_backend.h"
#include "crossbow/core/enforce.h"

namespace crossbow {

enum class DataType : uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kInt32 = 3,
  kInt64 = 4,
  kUInt8 = 5
};

size_t DataTypeSize(DataType type);
// oneDNN's names for the same types, both ways; int64 has none.
DataType FromDnnlType(dnnl::memory::data_type type);
dnnl::memory::data_type ToDnnlType(DataType type);
const char* DataTypeName(DataType type);
template <typename T>
DataType DataTypeOf();

using Shape = std::vector<int64_t>;
int64_t NumElements(const Shape& shape);
std::string ShapeString(const Shape& shape);

// A tensor: logical shape (NCHW for images), dtype, and bytes in a shared buffer.
//
// The bytes are laid out row-major ("plain") unless layout() holds a oneDNN blocked
// descriptor (nChw16c and friends): CPU kernels keep activations blocked between
// consecutive oneDNN operators, and only operators that need plain data reorder.
//
// Storage is either owned (grown on demand) or bound to a slice of a buffer that the
// memory planner shares between tensors whose lifetimes do not overlap; a bound tensor
// never grows past its slice.
//
// A tensor's device (the CPU unless given) is fixed when it is made; blocked layouts exist on
// the CPU only. data() on a GPU tensor is a device pointer, for kernels.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Device device) : device_(device) {}
  Tensor(const Shape& shape, DataType dtype, Device device = Device{}) : device_(device) {
    Resize(shape, dtype);
  }

  // Sets a plain layout of this shape; keeps the bytes if they fit.
  void Resize(const Shape& shape, DataType dtype = DataType::kFloat32);
  // Sets this shape with a blocked (or any) oneDNN layout, and the dtype the layout names;
  // keeps the bytes if they fit.
  void ResizeBlocked(const Shape& shape, const dnnl::memory::desc& layout);
  void ResizeLike(const Tensor& other);

  // Points this tensor at `capacity` bytes owned by `buffer` (the memory planner's).
  void BindStorage(std::shared_ptr<uint8_t> buffer, size_t capacity);
  bool is_bound() const { return bound_; }

  Device device() const { return device_; }
  bool is_cpu() const { return device_.type == DeviceType::kCPU; }
  const Shape& shape() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const;
  int64_t numel() const { return NumElements(shape_); }
  DataType dtype() const { return dtype_; }
  bool is_plain() const { return !blocked_; }
  const dnnl::memory::desc& layout() const { return layout_; }
  size_t nbytes() const;  // bytes the current layout occupies (with any block padding)
  size_t capacity() const { return capacity_; }
  bool defined() const { return storage_ != nullptr; }

  void* raw_data() { return storage_.get(); }
  const void* raw_data() const { return storage_.get(); }
  template <typename T>
  T* mutable_data() {
    CheckType(DataTypeOf<T>());
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    CheckType(DataTypeOf<T>());
    return static_cast<const T*>(raw_data());
  }

  std::string DebugString() const;

 private:
  void Reserve(size_t bytes);
  void CheckType(DataType expected) const;

  Device device_;
  Shape shape_;
  DataType dtype_ = DataType::kFloat32;
  bool blocked_ = false;
  dnnl::memory::desc layout_;
  std::shared_ptr<uint8_t> storage_;
  size_t capacity_ = 0;
  bool bound_ = false;
};

// dst takes src's shape, dtype and layout (plain unless both are on the CPU) and a copy of its
// bytes, whatever the two tensors' devices.
void CopyTensor(const Tensor& src, Tensor* dst);
// A CPU copy of t, from any device.
Tensor ToHost(const Tensor& t);

}  // namespace crossbow
