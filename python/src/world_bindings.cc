// crossbow._C.world / end_world / report_startup_failure: the MPI job, for `crossbow train`
// under mpirun. MPI is initialised only when mpirun started several ranks.
#include <pybind11/pybind11.h>

#include "crossbow/comm/handshake.h"
#include "crossbow/core/enforce.h"

namespace py = pybind11;

void BindWorld(py::module_& m) {
  using namespace crossbow;
  m.def(
      "world",
      [] {
        py::gil_scoped_release release;
        auto group = JoinWorld();
        return group ? std::make_pair(group->rank(), group->size()) : std::make_pair(0, 1);
      },
      "(rank, size) of the MPI job this process belongs to; (0, 1) when not under mpirun");
  m.def(
      "end_world",
      [](int exit_code) {
        py::gil_scoped_release release;
        EndWorld(exit_code);
      },
      py::arg("exit_code"),
      "Leaves the MPI job: finalises after success, aborts every rank after a failure");
  m.def(
      "report_startup_failure",
      [](const std::string& error, double timeout_s) {
        py::gil_scoped_release release;
        auto group = JoinWorld();
        if (!group) throw crossbow::Error(error);
        CheckRanksAgree(*group, {}, error, std::chrono::milliseconds(int64_t(timeout_s * 1000)));
      },
      py::arg("error"), py::arg("timeout_s"),
      "Tells the other ranks, at their start-up check, that this one cannot start; raises the "
      "job's error");
#ifdef CROSSBOW_WITH_MPI
  m.attr("has_mpi") = true;
#else
  m.attr("has_mpi") = false;
#endif
}
