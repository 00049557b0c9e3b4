#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace crossbow {

class Engine;

struct AutotunerOptions {
  double threshold = 0.1;         // add a learner while throughput grows by more than this fraction
  int max_learners = 64;          // per device
  size_t memory_limit_bytes = 0;  // for all learners; 0: the host's available memory
  int warmup_iterations = 3;      // after each change, not measured (plans compile)
  int window_iterations = 20;     // measured per setting
};

struct AutotuneDecision {
  int learners_per_device = 0;  // the setting measured
  double images_per_second = 0;
  std::string action;  // "start", "add", "step back", "stop: memory", "stop: max learners"
};

struct AutotuneResult {
  int learners_per_device = 1;  // the choice
  std::vector<AutotuneDecision> decisions;
  int64_t images_trained = 0;  // by the trial iterations (they train the model too)
};

// Picks the number of learners per device: starts with one, adds one while the measured
// throughput grows by more than the threshold and memory allows, steps back and stops when it
// does not. Each decision is logged with the throughput it saw.
class Autotuner {
 public:
  // Images/s measured with k learners per device.
  using Measure = std::function<double(int k)>;
  // Bytes that k learners per device need in all.
  using Memory = std::function<size_t(int k)>;

  explicit Autotuner(AutotunerOptions options = {});
  AutotuneResult Run(const Measure& measure, const Memory& memory) const;
  // On a live engine: each setting trains warm-up plus window iterations; the engine is left
  // at the chosen count.
  AutotuneResult Run(Engine* engine) const;

 private:
  AutotunerOptions options_;
};

// Bytes of host memory available now (MemAvailable).
size_t AvailableMemoryBytes();

}  // namespace crossbow
