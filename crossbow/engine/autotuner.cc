#include "crossbow/engine/autotuner.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "crossbow/core/enforce.h"
#include "crossbow/core/host_memory.h"
#include "crossbow/engine/engine.h"

namespace crossbow {

Autotuner::Autotuner(AutotunerOptions options) : options_(options) {
  CROSSBOW_ENFORCE_VALUE(options_.threshold >= 0, "autotuner threshold must be >= 0, got ",
                         options_.threshold);
  CROSSBOW_ENFORCE_VALUE(options_.max_learners >= 1, "autotuner max_learners must be >= 1, got ",
                         options_.max_learners);
  CROSSBOW_ENFORCE_VALUE(options_.look_ahead >= 0, "autotuner look_ahead must be >= 0, got ",
                         options_.look_ahead);
  CROSSBOW_ENFORCE_VALUE(options_.window_iterations >= 1 && options_.warmup_iterations >= 0,
                         "autotuner needs window_iterations >= 1 and warmup_iterations >= 0, got ",
                         options_.window_iterations, " and ", options_.warmup_iterations);
  CROSSBOW_ENFORCE_VALUE(options_.window_seconds >= 0,
                         "autotuner window_seconds must be >= 0, got ", options_.window_seconds);
}

AutotuneResult Autotuner::Run(const Measure& measure, const Memory& memory) const {
  return Run(
      measure, memory,
      options_.memory_limit_bytes ? options_.memory_limit_bytes : AvailableHostMemoryBytes());
}

AutotuneResult Autotuner::Run(const Measure& measure, const Memory& memory, size_t limit) const {
  AutotuneResult result;
  auto decide = [&](int k, double rate, const char* action) {
    result.decisions.push_back({k, rate, action});
    LOG(INFO) << "autotuner: " << k << " learner(s) per device, "
              << (rate > 0 ? detail::Concat(rate, " images/s") : "not measured") << ": " << action;
  };
  double best = 0;
  const auto stop = [&](const char* why) { decide(result.learners_per_device, best, why); };
  try {
    best = measure(1);
  } catch (const AutotuneStopped&) {
    stop("stop: training stops");
    return result;
  }
  decide(1, best, "start");
  // Measures k learners into *rate, or says why the search stops instead.
  auto attempt = [&](int k, double* rate) -> const char* {
    try {
      *rate = measure(k);
      return nullptr;
    } catch (const OutOfMemoryError& e) {
      LOG(WARNING) << "autotuner: " << k << " learner(s) per device do not fit: " << e.what();
      return "stop: out of memory";
    } catch (const AutotuneStopped&) {
      return "stop: training stops";
    }
  };
  const auto pays = [&](double rate) { return rate > best * (1 + options_.threshold); };
  int misses = 0;  // settings in a row since the choice that did not pay
  for (int k = 2;; ++k) {
    if (k > options_.max_learners) {
      stop("stop: max learners");
      break;
    }
    if (memory(k) > limit) {
      stop("stop: memory");
      break;
    }
    double rate = 0;
    if (const char* why = attempt(k, &rate)) {
      stop(why);
      break;
    }
    const bool confirmed = options_.confirm_adds && pays(rate);
    if (confirmed) {
      decide(k, rate, "confirm");
      double again = 0, best_again = 0;
      const char* why = attempt(k, &again);
      if (why == nullptr) {
        decide(k, again, "confirm");
        why = attempt(result.learners_per_device, &best_again);
      }
      if (why != nullptr) {
        stop(why);
        break;
      }
      decide(result.learners_per_device, best_again, "confirm");
      rate = (rate + again) / 2;
      best = (best + best_again) / 2;
    }
    if (pays(rate)) {
      best = rate;
      result.learners_per_device = k;
      misses = 0;
      decide(k, rate, confirmed ? "add: confirmed" : "add");
    } else if (++misses <= options_.look_ahead) {
      decide(k, rate, confirmed ? "look ahead: not confirmed" : "look ahead");
    } else {
      decide(k, rate, confirmed ? "step back: not confirmed" : "step back");
      break;
    }
  }
  LOG(INFO) << "autotuner: chose " << result.learners_per_device << " learner(s) per device";
  return result;
}

namespace {

// Across the ranks of an MPI job every rank must make the same decisions: they take the mean of
// the rates (summed in rank order, so bit-identical) and the smallest memory limit.
double Agree(const Engine& engine, double value, bool smallest) {
  ProcessGroup* group = engine.options().group.get();
  if (group == nullptr) return value;
  const auto timeout = std::chrono::milliseconds(engine.options().collective_timeout_ms);
  const std::vector<double> all = AllGatherDoubles(*group, {value}, timeout);
  if (smallest) return *std::min_element(all.begin(), all.end());
  double sum = 0;
  for (double v : all) sum += v;
  return sum / static_cast<double>(all.size());
}

}  // namespace

AutotuneResult Autotuner::Run(Engine* engine) const {
  AutotunerOptions options = options_;
  if (options.memory_limit_bytes == 0) options.memory_limit_bytes = engine->MemoryBudgetBytes();
  options.memory_limit_bytes =
      static_cast<size_t>(Agree(*engine, static_cast<double>(options.memory_limit_bytes), true));
  int64_t trained = 0;
  // Within the warm-up and the measured window every iteration but the last posts the next
  // one ahead, as training does (Engine::Iterate): the search measures the speed training will
  // have, and the window starts and ends with the engine idle.
  auto iterate = [&](bool post_next) {
    const double rate = engine->learning_rate();
    post_next = post_next && (!options_.goes_on || options_.goes_on()) && !engine->RestartsAt(rate);
    IterationResult r = engine->Iterate(post_next ? std::optional<double>(rate) : std::nullopt);
    trained += r.images;
    if (!options_.after_iteration || !options_.after_iteration(r)) return r.images;
    if (post_next) {  // the iteration posted ahead runs before the search stops
      r = engine->Iterate();
      trained += r.images;
      options_.after_iteration(r);
    }
    throw AutotuneStopped{};
  };
  auto measure = [&](int k) {
    engine->SetLearnersPerDevice(k);
    for (int i = 0; i < options_.warmup_iterations; ++i) {
      iterate(i + 1 < options_.warmup_iterations);
    }
    int64_t images = 0;
    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    // The window's last iteration is the one that starts with both minimums met: it posts
    // nothing ahead, so that the window ends with the engine idle. The ranks of an MPI job
    // iterate together: the window ends once it has lasted that long on every rank.
    for (int i = 0;; ++i) {
      const bool last = i + 1 >= options_.window_iterations &&
                        Agree(*engine, seconds(), true) >= options_.window_seconds;
      images += iterate(!last);
      if (last) break;
    }
    const double took = seconds();
    return Agree(*engine, images / took, false);
  };
  const size_t per_learner = engine->LearnerMemoryBytes();
  const int devices = engine->num_learners() / engine->learners_per_device();
  auto memory = [&](int k) { return per_learner * k * devices; };
  AutotuneResult result = Run(measure, memory, options.memory_limit_bytes);
  engine->SetLearnersPerDevice(result.learners_per_device);
  result.images_trained = trained;
  return result;
}

}  // namespace crossbow
