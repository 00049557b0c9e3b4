// crossbow._C.BatchSource, the base of every batch source (ImageLoader, ArraySource) and what
// the engine consumes. Numpy batches are copies, for inspection and tests; training reads the
// batches in C++.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "crossbow/core/batch_source.h"

namespace py = pybind11;
using crossbow::BatchSource;

namespace {

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

// (images float32 [N, C, H, W], labels int32 [N], epoch, index in epoch, last in epoch)
py::tuple NextBatch(BatchSource& source) {
  const crossbow::Batch* batch;
  {
    py::gil_scoped_release release;
    batch = source.Acquire();
  }
  crossbow::Shape shape = source.ExampleShape();
  shape.insert(shape.begin(), batch->size);
  py::array_t<float> images = EmptyArray<float>(shape);
  py::array_t<int32_t> labels = EmptyArray<int32_t>({batch->size});
  std::memcpy(images.mutable_data(), batch->images, crossbow::NumElements(shape) * sizeof(float));
  std::memcpy(labels.mutable_data(), batch->labels, batch->size * sizeof(int32_t));
  py::tuple out =
      py::make_tuple(images, labels, batch->epoch, batch->index_in_epoch, batch->last_in_epoch);
  source.Release(batch);
  return out;
}

}  // namespace

void BindBatchSource(py::module_& m) {
  py::class_<BatchSource, std::shared_ptr<BatchSource>>(m, "BatchSource")
      .def_property_readonly("example_shape", &BatchSource::ExampleShape)
      .def_property_readonly("epoch_size", &BatchSource::EpochSize)
      .def_property_readonly("batch_size", &BatchSource::batch_size)
      .def("next_batch", &NextBatch)
      .def("save_state", &BatchSource::SaveState)
      .def("restore_state", &BatchSource::RestoreState, py::call_guard<py::gil_scoped_release>());
}
