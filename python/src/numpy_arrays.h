#pragma once

// numpy arrays made in C++ for the bindings.

#include <pybind11/numpy.h>

#include <vector>

#include "crossbow/core/tensor.h"

namespace crossbow::python {

namespace py = pybind11;

// An uninitialised C-contiguous array with strides given explicitly: pybind11 2.10 reads the
// item size from numpy 2's dtype descriptor wrongly and would otherwise set zero strides.
template <typename T>
py::array_t<T> EmptyArray(const crossbow::Shape& shape) {
  std::vector<py::ssize_t> strides(shape.size(), sizeof(T));
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * shape[i + 1];
  }
  return py::array_t<T>(shape, strides);
}

}  // namespace crossbow::python
