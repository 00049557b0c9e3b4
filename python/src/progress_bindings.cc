// The trainer's progress bar (ProgressBar, on the console that log lines share) for scripts
// that step a Model themselves (scripts/demo/demo_mnist.py): Python draws no bar of its own.
#include <pybind11/pybind11.h>

#include <memory>

#include "crossbow/train/metrics.h"

namespace py = pybind11;
using namespace crossbow;

void BindProgress(py::module_& m) {
  py::class_<ProgressBar>(m, "ProgressBar",
                          "One status line on stderr, redrawn at most every 0.1 s on a terminal "
                          "(every tenth of the way as a line elsewhere); log lines keep it.")
      .def(py::init([] { return std::make_unique<ProgressBar>(); }))
      .def("update", &ProgressBar::Update, py::arg("label"), py::arg("fraction"),
           py::arg("images_per_s"), py::arg("eta_s"), py::arg("loss"))
      .def("finish", &ProgressBar::Finish, "Keeps the last status line as a line of its own.");
}
