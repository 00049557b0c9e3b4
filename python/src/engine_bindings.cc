// The engine in Python: Engine, EngineOptions (from the option table), parse_devices, the CPU's
// instruction set, IterationResult, the Autotuner, and BatchSource with an in-memory ArraySource
// over numpy arrays. Iterations run with the GIL released.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "crossbow/core/precision.h"
#include "crossbow/engine/array_source.h"
#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/engine.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "crossbow/train/trainer_options.h"

namespace py = pybind11;
using namespace crossbow;

namespace {

template <typename T>
std::vector<T> VectorOf(const py::array& a, const char* what) {
  CROSSBOW_ENFORCE_VALUE(py::isinstance<py::array_t<T>>(a), what, " must be a numpy array of ",
                         py::str(py::dtype::of<T>()).cast<std::string>(), ", got ",
                         py::str(a.dtype()).cast<std::string>());
  auto contiguous = py::array_t<T, py::array::c_style>::ensure(a);
  return std::vector<T>(contiguous.data(), contiguous.data() + contiguous.size());
}

py::array_t<float> CopyOut(const Tensor& t) {
  CROSSBOW_ENFORCE(t.is_plain() && t.dtype() == DataType::kFloat32,
                   "expected a plain float32 tensor, got ", t.DebugString());
  if (t.is_cpu()) return py::array_t<float>(t.shape(), t.data<float>());
  const Tensor host = ToHost(t);
  return py::array_t<float>(host.shape(), host.data<float>());
}

}  // namespace

void BindEngine(py::module_& m) {
  m.def("cuda_device_count", &CudaDeviceCount, "GPUs usable now (0 without CUDA or a GPU)");
  m.def("sync_names", &SynchroniserNames, "the registered synchronisers, sorted");
  m.def("cpu_isa", &CpuIsaName, "oneDNN's name for the widest instruction set it uses here");
  m.def("cpu_has_bf16", &CpuHasBf16, "whether this CPU runs precision bf16 (AVX512-BF16 or AMX)");
  m.def("parse_devices", [](const std::string& spec) {
    std::vector<std::vector<int>> out;
    for (const auto& d : ParseDevices(spec)) out.push_back(d.cores);
    return out;
  });

  py::class_<EngineOptions>(m, "EngineOptions")
      .def(py::init([](const py::kwargs& options) {
             const auto text = py::module_::import("json").attr("dumps")(options);
             return ParseEngineOptions(text.cast<std::string>());
           }),
           "the engine's options of the option table as keyword arguments (devices, learners, "
           "sync, sync_period, alpha ...: crossbow train's flags), checked by it");

  py::class_<IterationResult>(m, "IterationResult")
      .def_readonly("loss", &IterationResult::loss)
      .def_readonly("images", &IterationResult::images)
      .def_readonly("learner_losses", &IterationResult::learner_losses)
      .def_readonly("skipped", &IterationResult::skipped);

  py::class_<ArraySource, BatchSource, std::shared_ptr<ArraySource>>(m, "ArraySource")
      .def(py::init([](const py::array& images, const py::array& labels, int64_t batch_size) {
             CROSSBOW_ENFORCE_VALUE(images.ndim() == 4, "images must be [N, C, H, W], got ",
                                    images.ndim(), " dimensions");
             Shape example(images.shape() + 1, images.shape() + 4);
             return std::make_shared<ArraySource>(VectorOf<float>(images, "images"),
                                                  VectorOf<int32_t>(labels, "labels"),
                                                  std::move(example), batch_size);
           }),
           py::arg("images"), py::arg("labels"), py::arg("batch_size"));

  py::class_<Engine>(m, "Engine")
      .def(py::init([](const std::string& spec_json, EngineOptions options, BatchSource* train) {
             LearnerSpec spec = LearnerSpec::FromJson(spec_json);
             CheckEngineOptions(options);
             py::gil_scoped_release release;
             return std::make_unique<Engine>(spec, std::move(options), train);
           }),
           py::arg("spec_json"), py::arg("options"), py::arg("train"), py::keep_alive<1, 4>())
      .def("iterate", &Engine::Iterate, py::arg("next_rate") = py::none(),
           py::arg("next_momentum") = py::none(), py::call_guard<py::gil_scoped_release>())
      .def("set_momentum", &Engine::SetMomentum, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("learning_rate", &Engine::learning_rate)
      .def("set_learning_rate", &Engine::SetLearningRate, py::call_guard<py::gil_scoped_release>())
      .def("set_learners_per_device", &Engine::SetLearnersPerDevice,
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("learners_per_device", &Engine::learners_per_device)
      .def_property_readonly("num_learners", &Engine::num_learners)
      .def_property_readonly("iteration", &Engine::iteration)
      .def("evaluate",
           [](Engine& self, BatchSource* test) {
             EvalResult r;
             {
               py::gil_scoped_release release;
               r = self.Evaluate(test);
             }
             return py::make_tuple(r.loss, r.top1, r.top5);
           })
      .def("distances_to_average", &Engine::DistancesToAverage,
           py::call_guard<py::gil_scoped_release>())
      .def("learner_memory_bytes", &Engine::LearnerMemoryBytes)
      .def("state",
           [](Engine& self) {
             std::vector<std::pair<std::string, const Tensor*>> tensors;
             {
               py::gil_scoped_release release;
               tensors = self.StateTensors();
             }
             py::dict out;
             for (const auto& [name, t] : tensors) out[py::str(name)] = CopyOut(*t);
             return out;
           })
      .def("restore_state",
           [](Engine& self, const std::map<std::string, py::array>& arrays, int64_t iteration) {
             std::map<std::string, Tensor> tensors;
             for (const auto& [name, a] : arrays) {
               std::vector<float> values = VectorOf<float>(a, name.c_str());
               Tensor& t = tensors[name];
               t.Resize(Shape(a.shape(), a.shape() + a.ndim()));
               std::copy(values.begin(), values.end(), t.mutable_data<float>());
             }
             py::gil_scoped_release release;
             self.RestoreState(tensors, iteration);
           });

  py::class_<AutotunerOptions>(m, "AutotunerOptions")
      .def(py::init<>())
      .def_readwrite("threshold", &AutotunerOptions::threshold)
      .def_readwrite("max_learners", &AutotunerOptions::max_learners)
      .def_readwrite("memory_limit_bytes", &AutotunerOptions::memory_limit_bytes)
      .def_readwrite("warmup_iterations", &AutotunerOptions::warmup_iterations)
      .def_readwrite("window_iterations", &AutotunerOptions::window_iterations)
      .def_readwrite("look_ahead", &AutotunerOptions::look_ahead)
      .def_readwrite("confirm_adds", &AutotunerOptions::confirm_adds);
  py::class_<AutotuneDecision>(m, "AutotuneDecision")
      .def_readonly("learners_per_device", &AutotuneDecision::learners_per_device)
      .def_readonly("images_per_second", &AutotuneDecision::images_per_second)
      .def_readonly("action", &AutotuneDecision::action);
  py::class_<AutotuneResult>(m, "AutotuneResult")
      .def_readonly("learners_per_device", &AutotuneResult::learners_per_device)
      .def_readonly("decisions", &AutotuneResult::decisions);
  py::class_<Autotuner>(m, "Autotuner")
      .def(py::init<AutotunerOptions>(), py::arg("options") = AutotunerOptions{})
      .def(
          "run",
          [](const Autotuner& self, Engine* engine) {
            py::gil_scoped_release release;
            return self.Run(engine);
          },
          "tunes a live engine's learners per device and leaves it at the choice")
      .def(
          "run_trace",
          [](const Autotuner& self, const std::map<int, double>& rates, size_t bytes_per_learner) {
            return self.Run(
                [&](int k) {
                  auto it = rates.find(k);
                  CROSSBOW_ENFORCE_VALUE(it != rates.end(), "the trace has no throughput for ", k,
                                         " learners");
                  return it->second;
                },
                [&](int k) { return bytes_per_learner * k; });
          },
          py::arg("rates"), py::arg("bytes_per_learner"),
          "the decisions on a scripted throughput trace {learners: images/s}");
}
