// crossbow._C.Trainer and evaluate_checkpoint: JSON in, a dict out, the GIL released while the
// loop runs. Batch sources arrive as the std::shared_ptr<BatchSource> objects that the data
// and engine bindings register (ImageDB.source, ArraySource) or make_source makes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>

#include "crossbow/comm/process_group.h"
#include "crossbow/engine/sync/synchroniser.h"
#include "crossbow/train/checkpoint.h"
#include "crossbow/train/lr_policy.h"
#include "crossbow/train/make_source.h"
#include "crossbow/train/trainer_config.h"
#include "crossbow/train/trainer_options.h"

namespace py = pybind11;

namespace crossbow {
namespace {

// Keeps the sources alive as long as the trainer that reads them.
struct PyTrainer {
  std::shared_ptr<BatchSource> train, test;
  std::unique_ptr<Trainer> trainer;
};

py::dict ToDict(const TrainResult& r) {
  return py::module_::import("json").attr("loads")(TrainResultJson(r));
}

}  // namespace
}  // namespace crossbow

void BindTrainer(py::module_& m) {
  using namespace crossbow;
  m.def(
      "trainer_options",
      [] {
        py::list out;
        for (const TrainerOption& o : TrainerOptionTable()) {
          out.append(py::dict(py::arg("name") = o.name, py::arg("type") = o.type,
                              py::arg("default") = o.default_json,
                              py::arg("library_default") = o.library_default_json,
                              py::arg("unit") = o.unit, py::arg("rule") = o.rule,
                              py::arg("doc") = o.doc, py::arg("reader") = o.reader,
                              py::arg("per_rank") = o.per_rank));
        }
        return out;
      },
      "the table of training options, in the order of the flags: dicts of name, type (int, "
      "float, str, bool, floats), default (JSON; the commands'), library_default (JSON; Model's "
      "and "
      "ModelBuilder.to_spec's), unit, rule, doc, reader (engine, trainer or python), per_rank");
  m.def("_add_option_for_test", &AddOptionForTest, py::arg("name"), py::arg("doc"),
        py::arg("at_least"), py::arg("default"),
        "tests only: one more engine option (a float), before anything reads the table "
        "(crossbow/train/trainer_options.h)");
  m.def(
      "learner_scale",
      [](const std::string& scaling, int learners, const std::string& sync) {
        EngineOptions options;
        options.sync = sync;
        return LearnerScale(scaling, learners, MakeSynchroniser(options)->LearnersAreTheModel());
      },
      py::arg("scaling"), py::arg("learners"), py::arg("sync"),
      "the factor of each learner's rate that --lr-learner-scaling `scaling` gives `learners` "
      "learners of `sync`, as the trainer applies it");
  m.def(
      "check_trainer_options",
      [](const std::string& options_json) {
        const TrainerConfig config = ParseTrainerConfig(options_json);
        CheckEngineOptions(config.engine);
        CheckTrainerOptions(config.trainer);
      },
      py::arg("options_json"),
      "raises ValueError, naming the option, for a value its rule refuses, an unknown key or "
      "options that cannot work together");
  m.def(
      "make_source",
      [](const std::string& db, bool train, const std::string& options_json, int input_size) {
        py::gil_scoped_release release;
        return MakeSource(db, train, options_json, input_size);
      },
      py::arg("db"), py::arg("train"), py::arg("options_json"), py::arg("input_size"),
      "the batch source (an ImageLoader) of an LMDB that crossbow train and crossbow_train train "
      "on or evaluate with, from the training options as JSON (crossbow/train/make_source.h)");
  m.def(
      "schedule",
      [](const std::string& options_json, const std::vector<double>& epochs) {
        const TrainerConfig config = ParseTrainerConfig(options_json);
        CheckTrainerOptions(config.trainer);
        const LrPolicy policy(Schedule(config.trainer));
        std::vector<double> lr, momentum;
        for (double t : epochs) {
          lr.push_back(policy.At(t));
          momentum.push_back(policy.MomentumAt(t));
        }
        return py::dict(py::arg("lr") = lr, py::arg("momentum") = momentum);
      },
      py::arg("options_json"), py::arg("epochs"),
      "the rate, and the momentum of a momentum cycle (NaN: none), that training with these "
      "options sets at each position in epochs (crossbow/train/lr_policy.h)");
  m.def(
      "check_options", [](const std::string& options_json) { ParseTrainerConfig(options_json); },
      py::arg("options_json"),
      "raises ValueError, naming the option, for a value its rule refuses or an unknown key: the "
      "options a command shares with crossbow train, without the checks of a training run");
  py::class_<PyTrainer>(m, "Trainer")
      .def(py::init([](const std::string& spec_json, const std::string& options_json,
                       std::shared_ptr<BatchSource> train, std::shared_ptr<BatchSource> test) {
             LearnerSpec spec = LearnerSpec::FromJson(spec_json);
             TrainerConfig config = ParseTrainerConfig(options_json);
             config.engine.group = JoinWorld();  // null unless mpirun started several ranks
             auto t = std::make_unique<PyTrainer>();
             t->train = std::move(train);
             t->test = std::move(test);
             py::gil_scoped_release release;
             t->trainer = std::make_unique<Trainer>(spec, config.engine, t->train.get(),
                                                    t->test.get(), config.trainer);
             return t;
           }),
           py::arg("spec_json"), py::arg("options_json"), py::arg("train"),
           py::arg("test") = nullptr)
      .def("fit", [](PyTrainer& self) {
        TrainResult r;
        {
          py::gil_scoped_release release;
          r = self.trainer->Fit();
        }
        return ToDict(r);
      });
  m.def(
      "checkpoint_net",
      [](const std::string& path) {
        CheckpointInfo info;
        {
          py::gil_scoped_release release;
          info = ReadCheckpoint(path).info;
        }
        return std::make_pair(info.net, info.net_source);
      },
      py::arg("path"), "(net name, where the net came from) of a training checkpoint");
  m.def("evaluate_checkpoint", [](const std::string& spec_json, const std::string& path,
                                  std::shared_ptr<BatchSource> test) {
    LearnerSpec spec = LearnerSpec::FromJson(spec_json);
    py::gil_scoped_release release;
    EvalResult r = EvaluateCheckpoint(spec, path, test.get());
    return std::make_tuple(r.loss, r.top1, r.top5);
  });
}
