// crossbow._C.BatchSource (what the engine consumes) and ImageLoader, the LMDB source. Numpy
// batches are copies, for inspection and tests; training reads the batches in C++.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>

#include "data/loader.h"

namespace py = pybind11;
using crossbow::BatchSource;
using crossbow::data::ImageLoader;
using crossbow::data::LoaderOptions;

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

void BindLoader(py::module_& m) {
  py::class_<BatchSource, std::shared_ptr<BatchSource>>(m, "BatchSource")
      .def_property_readonly("example_shape", &BatchSource::ExampleShape)
      .def_property_readonly("epoch_size", &BatchSource::EpochSize)
      .def_property_readonly("batch_size", &BatchSource::batch_size)
      .def("next_batch", &NextBatch)
      .def("save_state", &BatchSource::SaveState)
      .def("restore_state", &BatchSource::RestoreState, py::call_guard<py::gil_scoped_release>());

  py::class_<ImageLoader, BatchSource, std::shared_ptr<ImageLoader>>(m, "ImageLoader")
      .def(py::init([](const std::string& path, int64_t batch_size, bool train, int channels,
                       bool rgb, int resize, int crop, int pad, bool random_resized_crop,
                       bool mirror, std::vector<float> mean, std::vector<float> deviation,
                       std::vector<float> mean_image, float scale, float brightness, float contrast,
                       float saturation, bool shuffle, uint64_t seed, int workers, int slots,
                       int num_classes, bool drop_last) {
             LoaderOptions o;
             o.path = path;
             o.batch_size = batch_size;
             crossbow::data::TransformConfig& t = o.transform;
             t.train = train;
             t.channels = channels;
             t.rgb = rgb;
             t.resize = resize;
             t.crop = crop;
             t.pad = pad;
             t.random_resized_crop = random_resized_crop;
             t.mirror = mirror;
             t.mean = std::move(mean);
             t.std = std::move(deviation);
             t.mean_image = std::move(mean_image);
             t.scale = scale;
             t.brightness = brightness;
             t.contrast = contrast;
             t.saturation = saturation;
             o.shuffle = shuffle;
             o.seed = seed;
             o.workers = workers;
             o.slots = slots;
             o.num_classes = num_classes;
             o.drop_last = drop_last;
             py::gil_scoped_release release;
             return std::make_shared<ImageLoader>(std::move(o));
           }),
           py::arg("path"), py::arg("batch_size"), py::arg("train") = true, py::arg("channels") = 0,
           py::arg("rgb") = false, py::arg("resize") = 0, py::arg("crop") = 0, py::arg("pad") = 0,
           py::arg("random_resized_crop") = false, py::arg("mirror") = false,
           py::arg("mean") = std::vector<float>{}, py::arg("std") = std::vector<float>{},
           py::arg("mean_image") = std::vector<float>{}, py::arg("scale") = 1.0f / 255.0f,
           py::arg("brightness") = 0.0f, py::arg("contrast") = 0.0f, py::arg("saturation") = 0.0f,
           py::arg("shuffle") = true, py::arg("seed") = 0, py::arg("workers") = 1,
           py::arg("slots") = 0, py::arg("num_classes") = 0, py::arg("drop_last") = false)
      .def_property_readonly("batches_per_epoch", &ImageLoader::batches_per_epoch)
      .def("corrupt_records", &ImageLoader::corrupt_records, py::arg("epoch"));
}
