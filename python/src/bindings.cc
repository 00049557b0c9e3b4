// The thin binding: nets and specs arrive as JSON, arrays as numpy, and the GIL is released
// while C++ runs. No logic of its own beyond checking what numpy hands over.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "crossbow/core/console.h"
#include "crossbow/core/serialize.h"
#include "crossbow/core/shape_inference.h"
#include "crossbow/engine/learner.h"
#include "operators/dnnl_utils.h"

namespace py = pybind11;
using namespace crossbow;

// Each subsystem's bindings live in a file of their own.
void BindBatchSource(py::module_& m);  // batch_source_bindings.cc
void BindEngine(py::module_& m);       // engine_bindings.cc
void BindConvert(py::module_& m);      // convert_bindings.cc
void BindLoader(py::module_& m);       // loader_bindings.cc
void BindProgress(py::module_& m);     // progress_bindings.cc
void BindTrainer(py::module_& m);      // trainer_bindings.cc
void BindWorld(py::module_& m);        // world_bindings.cc

namespace {

Shape ShapeOf(const py::array& a) { return Shape(a.shape(), a.shape() + a.ndim()); }

template <typename T>
const T* Checked(const py::array& a, const char* what, const char* dtype) {
  CROSSBOW_ENFORCE_VALUE(py::isinstance<py::array_t<T>>(a), what, " must be a ", dtype,
                         " numpy array, got dtype ", std::string(py::str(a.dtype())));
  CROSSBOW_ENFORCE_VALUE(a.flags() & py::array::c_style, what,
                         " must be C-contiguous (use numpy.ascontiguousarray)");
  return static_cast<const T*>(a.data());
}

py::array ToNumpy(const Tensor& t) {
  const bool is_int = t.dtype() == DataType::kInt32;
  py::array out =
      is_int ? py::array(py::array_t<int32_t>(t.shape())) : py::array_t<float>(t.shape());
  if (!t.is_cpu()) {
    CopyBytes(out.mutable_data(), Device{}, t.raw_data(), t.device(), t.nbytes());
  } else if (is_int) {
    std::memcpy(out.mutable_data(), t.raw_data(), t.nbytes());
  } else {
    thread_local CPUContext reorders;  // blocked CPU layouts -> numpy's row-major
    dnnl_utils::CopyToPlain(t, static_cast<float*>(out.mutable_data()), &reorders);
  }
  return out;
}

void CheckLabels(const py::array& data, const py::array& labels) {
  CROSSBOW_ENFORCE_VALUE(labels.ndim() == 1 && data.ndim() >= 1 && labels.shape(0) == data.shape(0),
                         "labels must have shape [N] with N = ", data.ndim() ? data.shape(0) : 0,
                         " images, got ", ShapeString(ShapeOf(labels)));
}

// A labelled batch from numpy, checked: float32 images [N, ...] and int32 labels [N].
struct LabelledBatch {
  const float* images;
  const int32_t* labels;
  Shape shape;
};

LabelledBatch CheckedBatch(const py::array& data, const py::array& labels) {
  LabelledBatch b{Checked<float>(data, "images", "float32"),
                  Checked<int32_t>(labels, "labels", "int32"), ShapeOf(data)};
  CheckLabels(data, labels);
  return b;
}

}  // namespace

PYBIND11_MODULE(_C, m) {
  m.doc() = "Crossbow's C++ runtime";
  InitLogging("crossbow");
  m.def("set_verbosity", &SetVerbosity, py::arg("level"),
        "-1: warnings and errors only; 0: per-epoch information; 1: per-iteration lines too");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const crossbow::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const crossbow::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def("operators", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& type : SchemaRegistry::Types()) {
      out.emplace_back(type, SchemaRegistry::Find(type)->Describe());
    }
    return out;
  });
  m.def("operator_doc", [](const std::string& type) {
    const OpSchema* schema = SchemaRegistry::Find(type);
    if (schema == nullptr) SchemaRegistry::FailUnknown(type);
    return schema->Describe();
  });
  m.def(
      "infer_shapes",
      [](const std::string& net_json, const std::map<std::string, OpenShape>& shapes,
         const std::vector<std::string>& int_inputs) {
        return InferOpenBatchShapes(ParseNet(net_json), shapes,
                                    {int_inputs.begin(), int_inputs.end()});
      },
      py::arg("net_json"), py::arg("shapes"), py::arg("int_inputs") = std::vector<std::string>{},
      "Every blob's shape from the operator schemas, given the fed blobs' shapes; a first "
      "dimension of None is the batch, for any size, and a blob whose shape depends on the "
      "batch otherwise is None");

  py::class_<Learner>(m, "Learner")
      .def(py::init([](const std::string& spec_json) {
             LearnerSpec spec = LearnerSpec::FromJson(spec_json);
             py::gil_scoped_release release;
             return std::make_unique<Learner>(std::move(spec));
           }),
           py::arg("spec_json"))
      .def("step",
           [](Learner& self, const py::array& data, const py::array& labels) {
             const LabelledBatch b = CheckedBatch(data, labels);
             py::gil_scoped_release release;
             return self.Step(b.images, b.shape, b.labels);
           })
      // Step in two halves, for tests that compare gradients: gradient(param) is valid between.
      // labels_b and lam (both or neither): a mixed batch (Mixup, CutMix).
      .def(
          "forward_backward",
          [](Learner& self, const py::array& data, const py::array& labels,
             const std::optional<py::array>& labels_b, const std::optional<py::array>& lam) {
            const LabelledBatch b = CheckedBatch(data, labels);
            CROSSBOW_ENFORCE_VALUE(labels_b.has_value() == lam.has_value(),
                                   "a mixed batch needs both labels_b and lam");
            const int32_t* second = nullptr;
            const float* weights = nullptr;
            if (labels_b) {
              second = CheckedBatch(data, *labels_b).labels;
              weights = Checked<float>(*lam, "lam", "float32");
              CROSSBOW_ENFORCE_VALUE(lam->ndim() == 1 && lam->shape(0) == b.shape[0],
                                     "lam must have shape [N] with N = ", b.shape[0]);
            }
            py::gil_scoped_release release;
            return self.ForwardBackward(b.images, b.shape, b.labels, second, weights);
          },
          py::arg("data"), py::arg("labels"), py::arg("labels_b") = std::nullopt,
          py::arg("lam") = std::nullopt)
      .def("update", &Learner::Update, py::call_guard<py::gil_scoped_release>())
      .def("gradient",
           [](Learner& self, const std::string& param) { return ToNumpy(*self.Gradient(param)); })
      .def("predict",
           [](Learner& self, const py::array& data) {
             const float* images = Checked<float>(data, "images", "float32");
             Shape shape = ShapeOf(data);
             const Tensor* out;
             {
               py::gil_scoped_release release;
               out = &self.Predict(images, shape);
             }
             return ToNumpy(*out);
           })
      .def("evaluate",
           [](Learner& self, const py::array& data, const py::array& labels) {
             const LabelledBatch b = CheckedBatch(data, labels);
             EvalResult r;
             {
               py::gil_scoped_release release;
               r = self.Evaluate(b.images, b.shape, b.labels);
             }
             return py::make_tuple(r.loss, r.top1, r.top5);
           })
      .def(
          "forward",
          [](Learner& self, const py::array& data, const std::set<std::string>& outputs,
             const std::optional<py::array>& labels) {
            const float* images = Checked<float>(data, "images", "float32");
            const int32_t* ids = nullptr;
            if (labels) {
              ids = Checked<int32_t>(*labels, "labels", "int32");
              CheckLabels(data, *labels);
            }
            const Shape shape = ShapeOf(data);
            {
              py::gil_scoped_release release;
              self.Forward(images, shape, ids, outputs);
            }
            py::dict out;
            for (const auto& name : outputs) out[py::str(name)] = ToNumpy(self.Fetch(name));
            return out;
          },
          py::arg("images"), py::arg("outputs"), py::arg("labels") = std::nullopt)
      .def("fetch",
           [](Learner& self, const std::string& name) { return ToNumpy(self.Fetch(name)); })
      .def("fetchable_names", &Learner::FetchableNames)
      .def("gradient_names", &Learner::GradientNames)
      .def("get", [](Learner& self, const std::string& name) { return ToNumpy(*self.Blob(name)); })
      .def("set",
           [](Learner& self, const std::string& name, const py::array& value) {
             const float* src = Checked<float>(value, name.c_str(), "float32");
             Tensor* t = self.Blob(name);
             CROSSBOW_ENFORCE_VALUE(t->is_plain() && t->shape() == ShapeOf(value), "blob '", name,
                                    "' has shape ", ShapeString(t->shape()), ", the array has ",
                                    ShapeString(ShapeOf(value)));
             t->mutable_data<float>();  // a float32 blob
             CopyBytes(t->raw_data(), t->device(), src, Device{}, t->nbytes());
           })
      .def("param_names", [](Learner& self) { return self.spec().params; })
      .def("state_names", [](Learner& self) { return self.spec().state; })
      .def("save", &Learner::Save, py::call_guard<py::gil_scoped_release>())
      .def("load", &Learner::Load, py::call_guard<py::gil_scoped_release>())
      .def("set_learning_rate", &Learner::SetLearningRate)
      .def("set_momentum", &Learner::SetMomentum)
      .def_property_readonly("iteration", &Learner::iteration)
      .def("memory_stats", [](Learner& self) {
        MemoryStats s = self.memory_stats();
        return std::map<std::string, size_t>{{"planned_bytes", s.planned_bytes},
                                             {"unplanned_bytes", s.unplanned_bytes}};
      });
  m.def(
      "load_tensors",
      [](const std::string& path) {
        std::map<std::string, Tensor> tensors;
        {
          py::gil_scoped_release release;
          tensors = LoadTensors(path);
        }
        py::dict out;
        for (const auto& [name, t] : tensors) {
          if (t.dtype() == DataType::kFloat32 || t.dtype() == DataType::kInt32) {
            out[py::str(name)] = ToNumpy(t);
          }
        }
        return out;
      },
      py::arg("path"),
      "The float32 and int32 tensors of a file that Model.save or a checkpoint wrote, by name "
      "(a checkpoint's average model is under z/)");
  BindBatchSource(m);
  BindEngine(m);
  BindConvert(m);
  BindLoader(m);
  BindProgress(m);
  BindTrainer(m);
  BindWorld(m);
}
