// crossbow._C.BatchSource, the base of every batch source (ImageLoader, ArraySource) and what
// the engine consumes. Numpy batches are copies, for inspection and tests; training reads the
// batches in C++.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "crossbow/core/batch_source.h"
#include "python/src/numpy_arrays.h"

namespace py = pybind11;
using crossbow::BatchSource;
using crossbow::python::EmptyArray;

namespace {

template <typename T>
py::array_t<T> Copy(const T* data, const crossbow::Shape& shape) {
  py::array_t<T> out = EmptyArray<T>(shape);
  std::memcpy(out.mutable_data(), data, crossbow::NumElements(shape) * sizeof(T));
  return out;
}

// (images float32 [N, C, H, W], labels int32 [N], epoch, index in epoch, last in epoch); with
// `mixed`, labels_b and lam (None for a batch that is not mixed) after labels.
py::tuple NextBatch(BatchSource& source, bool mixed) {
  const crossbow::Batch* batch;
  {
    py::gil_scoped_release release;
    batch = source.Acquire();
  }
  crossbow::Shape shape = source.ExampleShape();
  shape.insert(shape.begin(), batch->size);
  const crossbow::Shape rows = {batch->size};
  py::list out;
  out.append(Copy(batch->images, shape));
  out.append(Copy(batch->labels, rows));
  if (mixed) {
    const bool has = batch->labels_b != nullptr;
    out.append(has ? py::object(Copy(batch->labels_b, rows)) : py::none());
    out.append(has ? py::object(Copy(batch->lam, rows)) : py::none());
  }
  for (py::object o :
       {py::cast(batch->epoch), py::cast(batch->index_in_epoch), py::cast(batch->last_in_epoch)}) {
    out.append(o);
  }
  source.Release(batch);
  return py::tuple(out);
}

}  // namespace

void BindBatchSource(py::module_& m) {
  py::class_<BatchSource, std::shared_ptr<BatchSource>>(m, "BatchSource")
      .def_property_readonly("example_shape", &BatchSource::ExampleShape)
      .def_property_readonly("epoch_size", &BatchSource::EpochSize)
      .def_property_readonly("batch_size", &BatchSource::batch_size)
      .def("next_batch", [](BatchSource& s) { return NextBatch(s, false); })
      .def(
          "next_mixed_batch", [](BatchSource& s) { return NextBatch(s, true); },
          "(images, labels, labels_b, lam, epoch, index, last): labels_b and lam None unmixed")
      .def(
          "set_mix",
          [](BatchSource& s, double mixup_alpha, double cutmix_alpha) {
            py::gil_scoped_release release;
            return s.SetMix({mixup_alpha, cutmix_alpha});
          },
          py::arg("mixup_alpha") = 0.0, py::arg("cutmix_alpha") = 0.0,
          "Mixup/CutMix from the next batch on; False where the source cannot mix")
      .def("save_state", &BatchSource::SaveState)
      .def("restore_state", &BatchSource::RestoreState, py::call_guard<py::gil_scoped_release>());
}
