// crossbow_train: `crossbow train` where our Python module is not installed (the GPU machine of
// scripts/gpu/bundle_gpu.sh): a learner spec, written by `crossbow spec` or `crossbow reproduce
// --export`, trained on LMDBs through the same C++ Trainer, loader and input presets. Prints the
// result as one JSON line on standard output (the keys of Trainer.fit() in Python); logs and
// the progress bar go to standard error. Exit code 0, 1 on an error (the line carries "error"),
// 2 for bad flags, 128 + N when signal N stopped training (after its checkpoint).
#include <gflags/gflags.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "crossbow/comm/process_group.h"
#include "crossbow/core/console.h"
#include "crossbow/core/enforce.h"
#include "crossbow/engine/learner_spec.h"
#include "crossbow/train/make_source.h"
#include "crossbow/train/trainer.h"
#include "crossbow/train/trainer_config.h"
#include "crossbow/train/trainer_option_flags.h"

DEFINE_string(spec, "", "learner spec JSON file (crossbow spec, or crossbow reproduce --export)");
DEFINE_string(options, "",
              "training options as one JSON object (crossbow reproduce --export writes it); the "
              "flags below override its values");
DEFINE_string(train_db, "", "LMDB to train on");
DEFINE_string(test_db, "", "LMDB to evaluate the average model on (optional)");

namespace crossbow {
namespace {

using nlohmann::json;

// The engine's and the trainer's options, and data loading's. The net's own (momentum, weight
// decay, label smoothing, input size ...) are in the spec, and are set where it is made.
bool TrainReads(const TrainerOption& o) {
  return o.reader == "engine" || o.reader == "trainer" || o.reader == "data";
}

// A flag of `reader`'s options, if one was given: an error saying where it belongs.
void RefuseFlagsOf(const std::string& reader, int* argc, char** argv, const char* where) {
  std::vector<std::string> names;
  TakeOptionFlags(
      argc, argv, [&](const TrainerOption& o) { return o.reader == reader; }, &names);
  CROSSBOW_ENFORCE_VALUE(names.empty(), "--", names.empty() ? "" : names[0], where);
}

std::string ReadFile(const std::string& path, const char* flag) {
  CROSSBOW_ENFORCE_VALUE(!path.empty(), "--", flag, " is required");
  std::ifstream in(path);
  CROSSBOW_ENFORCE_VALUE(in.good(), "cannot read --", flag, " '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The table's defaults, the --options file over them, the flags that were given over both.
json Options(json flags, const std::vector<std::string>& given) {
  if (FLAGS_options.empty()) return flags;
  const json file = json::parse(ReadFile(FLAGS_options, "options"), nullptr, false);
  CROSSBOW_ENFORCE_VALUE(file.is_object(), "--options '", FLAGS_options,
                         "' is not a JSON object of training options");
  for (const auto& [name, value] : file.items()) {
    if (std::find(given.begin(), given.end(), name) == given.end()) flags[name] = value;
  }
  return flags;
}

json Run(const json& options) {
  TrainerConfig config = ParseTrainerConfig(options.dump());
  const LearnerSpec spec = LearnerSpec::FromJson(ReadFile(FLAGS_spec, "spec"));
  CROSSBOW_ENFORCE_VALUE(!FLAGS_train_db.empty(), "--train_db is required");
  config.engine.group = JoinWorld();  // null unless mpirun started several ranks
  const int input_size = static_cast<int>(spec.input_shape.back());
  auto train = MakeSource(FLAGS_train_db, true, options.dump(), input_size);
  auto test = MakeSource(FLAGS_test_db, false, options.dump(), input_size);
  Trainer trainer(spec, config.engine, train.get(), test.get(), config.trainer);
  return json::parse(TrainResultJson(trainer.Fit()));
}

}  // namespace
}  // namespace crossbow

int main(int argc, char** argv) {
  nlohmann::json flags;
  std::vector<std::string> given;
  try {
    flags =
        nlohmann::json::parse(crossbow::TakeOptionFlags(&argc, argv, crossbow::TrainReads, &given));
    crossbow::RefuseFlagsOf("net", &argc, argv,
                            " is the net's: it is set in the spec (crossbow spec, or crossbow "
                            "reproduce --export), not here");
    crossbow::RefuseFlagsOf("python", &argc, argv,
                            " is crossbow train's alone (the Python front end writes it); "
                            "crossbow_train has no such output");
  } catch (const std::exception& e) {
    std::cerr << "crossbow_train: " << e.what() << std::endl;
    return 2;
  }
  gflags::SetUsageMessage(
      "trains a learner spec on LMDBs, as crossbow train does; prints one JSON line. Usage:\n"
      "  crossbow_train --spec resnet32.json --options options.json --train_db cifar10_train "
      "--test_db cifar10_test [--devices cuda:0 ...]\n"
      "Training options, as crossbow train's:\n" +
      crossbow::OptionFlagsHelp(crossbow::TrainReads));
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (argc > 1) {
    std::cerr << "crossbow_train: unexpected argument '" << argv[1] << "' (see --help)"
              << std::endl;
    return 2;
  }
  crossbow::InitLogging(argv[0]);
  nlohmann::json out;
  int rc = 0;
  try {
    out = crossbow::Run(crossbow::Options(flags, given));
    if (out["signal"] != 0) rc = 128 + out["signal"].get<int>();
  } catch (const std::exception& e) {
    out["error"] = e.what();
    rc = 1;
  }
  std::cout << out.dump() << std::endl;
  return rc;
}
