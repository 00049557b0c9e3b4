#pragma once

#include <cstdint>

#include "crossbow/core/tensor.h"

namespace crossbow {

// Calls f with a null pointer of the tensor's element type: float, or uint16_t for bfloat16.
// For operators whose own loops are templates over the element type.
template <class F>
void WithElementType(const Tensor& t, F f) {
  if (t.dtype() == DataType::kBFloat16) {
    f(static_cast<uint16_t*>(nullptr));
  } else {
    f(static_cast<float*>(nullptr));
  }
}

template <class T>
const T* Elements(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}

template <class T>
T* Elements(Tensor* t) {
  return static_cast<T*>(t->raw_data());
}

}  // namespace crossbow
