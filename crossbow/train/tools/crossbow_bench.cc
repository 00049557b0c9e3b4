// crossbow_bench: training throughput of a learner spec with the engine (many learners per
// device, SMA by default) on synthetic data held in memory, on the CPU or on GPUs. Prints one
// JSON line on standard output (logs go to standard error); on failure the line carries
// "error" and the exit code is 1.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "crossbow/core/console.h"
#include "crossbow/core/enforce.h"
#include "crossbow/engine/array_source.h"
#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/engine.h"
#include "crossbow/engine/learner_spec.h"
#include "crossbow/train/trainer_config.h"
#include "crossbow/train/trainer_option_flags.h"
#ifdef CROSSBOW_WITH_CUDA
#include "crossbow/core/context_cuda.h"
#endif

// The training options (--devices, --batch_size, --learners, --sync, --seed ...) are the option
// table's (trainer_option_flags.h); these are the benchmark's own.
DEFINE_string(spec, "", "learner spec JSON file (crossbow spec --net resnet32 > resnet32.json)");
DEFINE_int32(warmup_iterations, 5, "iterations before measuring (plans compile, graphs record)");
DEFINE_double(seconds, 3, "seconds measured (after warm-up and autotuning)");
DEFINE_int32(examples, 1024, "synthetic examples in memory (rounded up to whole batches)");
DEFINE_int32(num_classes, 10, "labels are drawn from [0, num_classes)");
DEFINE_bool(run_ahead, true,
            "post each measured iteration's next batches ahead (Engine::Iterate's next rate)");
DEFINE_int32(autotune_warmup, 3, "auto: iterations after each change, not measured");
DEFINE_int32(autotune_window, 20, "auto: iterations measured per setting");
DEFINE_int32(max_learners, 16, "auto: most learners per device");
DEFINE_double(memory_limit_gib, 0,
              "auto: memory for all learners (0: 90% of the GPUs' memory, or the host's free)");

namespace crossbow {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  CROSSBOW_ENFORCE_VALUE(!path.empty(), "--spec is required (crossbow spec --net NET > FILE)");
  std::ifstream in(path);
  CROSSBOW_ENFORCE_VALUE(in.good(), "cannot read the spec file '", path, "'");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::unique_ptr<ArraySource> SyntheticSource(const Shape& example, int64_t batch, uint64_t seed) {
  CROSSBOW_ENFORCE_VALUE(FLAGS_examples >= 1 && FLAGS_num_classes >= 1,
                         "--examples and --num_classes must be >= 1");
  const int64_t n = (FLAGS_examples + batch - 1) / batch * batch;
  int64_t size = 1;
  for (int64_t d : example) size *= d;
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::normal_distribution<float> pixel;
  std::uniform_int_distribution<int32_t> label(0, FLAGS_num_classes - 1);
  std::vector<float> images(n * size);
  std::vector<int32_t> labels(n);
  for (float& v : images) v = pixel(rng);
  for (int32_t& v : labels) v = label(rng);
  return std::make_unique<ArraySource>(std::move(images), std::move(labels), example, batch);
}

std::set<int> Gpus(const std::vector<DeviceLayout>& devices) {
  std::set<int> gpus;
  for (const auto& d : devices) {
    if (d.device.type == DeviceType::kCUDA) gpus.insert(d.device.index);
  }
  return gpus;
}

// The autotuner's limit for all learners: 90% of each GPU used, or the host's free memory.
size_t MemoryLimit(const std::vector<DeviceLayout>& devices) {
  if (FLAGS_memory_limit_gib > 0) return static_cast<size_t>(FLAGS_memory_limit_gib * (1 << 30));
  size_t limit = 0;
#ifdef CROSSBOW_WITH_CUDA
  for (int gpu : Gpus(devices)) limit += cuda::MemoryInfo(gpu).second / 10 * 9;
#endif
  return limit;  // 0: the autotuner takes the host's available memory
}

json GpuMemory(const std::vector<DeviceLayout>& devices) {
  json out = json::array();
#ifdef CROSSBOW_WITH_CUDA
  for (int gpu : Gpus(devices)) {
    const auto [free, total] = cuda::MemoryInfo(gpu);
    const auto [in_use, cached] = cuda::AllocatorStats(gpu);
    out.push_back({{"gpu", gpu},
                   {"allocator_in_use_bytes", in_use},
                   {"allocator_cached_bytes", cached},
                   {"free_bytes", free},
                   {"total_bytes", total}});
  }
#endif
  return out;
}

json Autotune(Engine& engine, const std::vector<DeviceLayout>& devices,
              const TrainerOptions& trainer) {
  AutotunerOptions options = AutotunerOptionsOf(trainer);
  options.max_learners = FLAGS_max_learners;
  options.memory_limit_bytes = MemoryLimit(devices);
  options.warmup_iterations = FLAGS_autotune_warmup;
  options.window_iterations = FLAGS_autotune_window;
  const auto start = Clock::now();
  const AutotuneResult result = Autotuner(options).Run(&engine);
  json decisions = json::array();
  for (const auto& d : result.decisions) {
    decisions.push_back({{"learners_per_device", d.learners_per_device},
                         {"images_per_s", d.images_per_second},
                         {"action", d.action}});
  }
  return {{"chosen", result.learners_per_device},
          {"decisions", decisions},
          {"images_trained", result.images_trained},
          {"seconds", std::chrono::duration<double>(Clock::now() - start).count()}};
}

json Run(const json& flags) {
  const LearnerSpec spec = LearnerSpec::FromJson(ReadFile(FLAGS_spec));
  const TrainerConfig config = ParseTrainerConfig(flags.dump());
  EngineOptions options = config.engine;
  // Random labels can drive a net without batch norm to a non-finite loss; the throughput is
  // still measured, and "skipped_updates" says how often it happened.
  options.skip_nan = true;
  CheckEngineOptions(options);
  const bool autotune = config.trainer.autotune;
  CROSSBOW_ENFORCE_VALUE(FLAGS_warmup_iterations >= 0 && FLAGS_seconds > 0,
                         "--warmup_iterations must be >= 0 and --seconds > 0");
  auto source = SyntheticSource(spec.input_shape, flags["batch_size"].get<int64_t>(), options.seed);
  Engine engine(spec, options, source.get());
  json out;
  auto warm_up = [&] {
    for (int i = 0; i < FLAGS_warmup_iterations; ++i) engine.Iterate();
  };
  warm_up();
  if (autotune) {
    out["autotune"] = Autotune(engine, options.devices, config.trainer);
    warm_up();  // the chosen count may have just lost learners
  }
  int64_t iterations = 0, images = 0, skipped = 0;
  double seconds = 0;
  const auto start = Clock::now();
  const std::optional<double> rate =
      FLAGS_run_ahead ? std::optional<double>(engine.learning_rate()) : std::nullopt;
  for (bool more = true; more;) {
    // With a rate each iteration posts the next one ahead until the time is up; the iteration
    // that finds it up posts none and is the last, so that the engine ends idle.
    more = seconds < FLAGS_seconds;
    const IterationResult r = engine.Iterate(more ? rate : std::nullopt);
    images += r.images;
    skipped += r.skipped;
    ++iterations;
    seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!rate) more = seconds < FLAGS_seconds;
  }
  out["images_per_s"] = static_cast<double>(images) / seconds;
  out["iterations"] = iterations;
  out["images"] = images;
  out["seconds"] = seconds;
  out["skipped_updates"] = skipped;
  out["learners_per_device"] = engine.learners_per_device();
  out["num_learners"] = engine.num_learners();
  out["learner_memory_bytes"] = engine.LearnerMemoryBytes();
  out["gpu_memory"] = GpuMemory(options.devices);
  out["spec_device"] = spec.device.ToString();
  out["net"] = spec.name;
  return out;
}

}  // namespace
}  // namespace crossbow

namespace crossbow {
namespace {

// The engine's options, and of the others what a benchmark without a trainer reads.
bool BenchReads(const TrainerOption& o) {
  return o.reader == "engine" || o.name == "batch_size" || o.name == "autotune_threshold" ||
         o.name == "autotune_seconds" || o.name == "autotune_confirm";
}

}  // namespace
}  // namespace crossbow

int main(int argc, char** argv) {
  nlohmann::json out, flags;
  int rc = 0;
  try {
    flags = nlohmann::json::parse(crossbow::TakeOptionFlags(&argc, argv, crossbow::BenchReads));
  } catch (const std::exception& e) {
    std::cerr << "crossbow_bench: " << e.what() << std::endl;
    return 2;
  }
  gflags::SetUsageMessage(
      "training throughput on synthetic data; prints one JSON line. Usage:\n"
      "  crossbow_bench --spec resnet32.json --devices cuda:0 --batch_size 32 --learners auto\n"
      "Training options, as crossbow train's:\n" +
      crossbow::OptionFlagsHelp(crossbow::BenchReads));
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  crossbow::InitLogging(argv[0]);
  try {
    out = crossbow::Run(flags);
  } catch (const std::exception& e) {
    out["error"] = e.what();
    rc = 1;
  }
  out["bench"] = "engine";
  for (const char* key : {"devices", "batch_size", "learners", "sync"}) out[key] = flags[key];
  std::cout << out.dump() << std::endl;
  return rc;
}
