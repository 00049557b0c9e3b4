// crossbow._C.ImageLoader, the LMDB batch source.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "data/loader.h"
#include "data/mix.h"
#include "data/presets.h"
#include "python/src/numpy_arrays.h"

namespace py = pybind11;
using crossbow::BatchSource;
using crossbow::data::ImageLoader;
using crossbow::data::LoaderOptions;

void BindLoader(py::module_& m) {
  py::class_<ImageLoader, BatchSource, std::shared_ptr<ImageLoader>>(m, "ImageLoader")
      .def(py::init([](const std::string& path, int64_t batch_size, bool train, int channels,
                       bool rgb, int resize, int crop, int pad, bool random_resized_crop,
                       bool mirror, std::vector<float> mean, std::vector<float> deviation,
                       std::vector<float> mean_image, float scale, float brightness, float contrast,
                       float saturation, bool shuffle, uint64_t seed, int workers, int slots,
                       int num_classes, bool drop_last, const std::string& preset, int input_size,
                       float min_crop_area, bool reduced_decode, const std::string& read_order,
                       int64_t block_records, const std::string& eval_crop) {
             LoaderOptions o;
             o.path = path;
             o.batch_size = batch_size;
             crossbow::data::TransformConfig& t = o.transform;
             crossbow::data::TransformOverrides overrides{{}, {}, min_crop_area, eval_crop};
             if (!preset.empty()) {  // the preset's transform; mean and std may override it
               t = crossbow::data::PresetTransform(preset, train, input_size);
               overrides.mean = std::move(mean);
               overrides.std = std::move(deviation);
             } else {
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
             }
             crossbow::data::ApplyOverrides(overrides, &t);
             t.reduced_decode = reduced_decode;
             o.shuffle = shuffle;
             o.seed = seed;
             o.workers = workers;
             o.slots = slots;
             o.num_classes = num_classes;
             o.drop_last = drop_last;
             o.read_order = read_order;
             o.block_records = block_records;
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
           py::arg("slots") = 0, py::arg("num_classes") = 0, py::arg("drop_last") = false,
           py::arg("preset") = "", py::arg("input_size") = 0, py::arg("min_crop_area") = 0.0f,
           py::arg("reduced_decode") = true, py::arg("read_order") = "auto",
           py::arg("block_records") = 0, py::arg("eval_crop") = "preset")
      .def_property_readonly("batches_per_epoch", &ImageLoader::batches_per_epoch)
      .def_property_readonly("block_records", &ImageLoader::block_records)
      .def_property_readonly("data_identity", &ImageLoader::DataIdentity)
      .def("corrupt_records", &ImageLoader::corrupt_records, py::arg("epoch"));
  m.def("input_presets", &crossbow::data::PresetNames, "the names of the input presets");
  m.def(
      "input_preset_statistics",
      [](const std::string& name) {
        // Any input size: the statistics do not depend on it.
        const crossbow::data::TransformConfig t = crossbow::data::PresetTransform(name, true, 1);
        return py::dict(py::arg("mean") = t.mean, py::arg("std") = t.std);
      },
      py::arg("name"),
      "an input preset's per-channel mean and std, in [0, 1] units (data/presets.cc); empty for "
      "none");
  m.def(
      "mix_batch",
      [](py::array_t<float, py::array::c_style | py::array::forcecast> images,
         py::array_t<int32_t, py::array::c_style | py::array::forcecast> labels, double mixup_alpha,
         double cutmix_alpha, uint64_t seed, int64_t epoch, int64_t index) {
        const int64_t n = labels.size();
        CROSSBOW_ENFORCE_VALUE(images.ndim() == 4 && images.shape(0) == n,
                               "mix_batch: images must be [N, C, H, W] for N labels");
        const crossbow::Shape example = {images.shape(1), images.shape(2), images.shape(3)};
        const crossbow::data::MixDraw draw = crossbow::data::DrawMix(
            {mixup_alpha, cutmix_alpha}, seed, epoch, index, n, example[1], example[2]);
        using crossbow::python::EmptyArray;
        py::array_t<float> mixed = EmptyArray<float>({n, example[0], example[1], example[2]});
        std::copy_n(images.data(), images.size(), mixed.mutable_data());
        py::array_t<int32_t> labels_b = EmptyArray<int32_t>({n});
        py::array_t<float> lam = EmptyArray<float>({n});
        crossbow::data::ApplyMix(draw, example, n, mixed.mutable_data(), labels.data(),
                                 labels_b.mutable_data(), lam.mutable_data());
        py::dict out;
        out["images"] = mixed;
        out["labels_b"] = labels_b;
        out["lam"] = lam;
        out["perm"] = draw.perm;
        out["cutmix"] = draw.cutmix;
        out["box"] = py::make_tuple(draw.top, draw.bottom, draw.left, draw.right);
        return out;
      },
      py::arg("images"), py::arg("labels"), py::arg("mixup_alpha") = 0.0,
      py::arg("cutmix_alpha") = 0.0, py::arg("seed") = 0, py::arg("epoch") = 0,
      py::arg("index") = 0,
      "What the loader does to batch `index` of `epoch` with these alphas (data/mix.h): a dict "
      "of the mixed images, labels_b, lam, perm, cutmix and box (top, bottom, left, right)");
}
