#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace crossbow {

class Engine;
struct IterationResult;

struct AutotunerOptions {
  double threshold = 0.1;  // a setting pays when it beats the best by more than this fraction
  // Settings measured past the best before the search stops: a gain below the threshold is
  // often followed by a larger one (a GPU's occupancy grows in steps).
  int look_ahead = 2;
  int max_learners = 64;  // per device
  // For all learners; 0: the engine's budget (the host's available memory, or on GPUs what
  // they have free), or in Run(measure, memory) the host's available memory.
  size_t memory_limit_bytes = 0;
  int warmup_iterations = 3;   // after each change, not measured (plans compile)
  int window_iterations = 20;  // measured per setting, and for at least window_seconds:
  // twenty iterations of small batches last a fraction of a second, in which a VM's pauses
  // decide the figure (two learners of batch 16 measured at 1,159 images/s in 0.4 s, then
  // trained at 1,687: docs/history/results-0.1.0.md).
  double window_seconds = 2;
  // A setting that beats the best is measured again, and the best after it, before it is
  // added; it is added when the mean of its two windows still beats the mean of the best's by
  // more than the threshold. Measured in that order (best, setting, setting, best, where the
  // best was the setting measured last) a steady drift of the machine's speed cancels: on two cores
  // 2, 4 and 6 learners run at one rate, and single windows added learners on a VM's +-20%
  // (docs/history/results-0.1.0.md).
  bool confirm_adds = true;
  // Run(Engine*) calls it after each trial iteration with its result; true ends the search at
  // the choice so far (training's budget is spent, a stop signal came). Across the ranks of an
  // MPI job its answers must agree.
  std::function<bool(const IterationResult&)> after_iteration;
  // Whether training goes on after the iteration about to run, so that the next may be posted
  // ahead (Engine::Iterate); unset: always. Across the ranks of an MPI job it must agree too.
  std::function<bool()> goes_on;
};

// Thrown by a measurement to end the search at the choice so far.
struct AutotuneStopped {};

struct AutotuneDecision {
  int learners_per_device = 0;  // the setting measured
  double images_per_second = 0;
  // A measurement: "start", "add", "look ahead" (did not pay; the next one is measured),
  // "step back", or "confirm" (one of the windows of a confirmation). After a confirmation, its
  // verdict on the setting, at the mean of its two windows: "add: confirmed", "look ahead: not
  // confirmed" or "step back: not confirmed". Where the search stopped, at the choice: "stop:
  // memory", "stop: out of memory", "stop: max learners", "stop: training stops".
  std::string action;
};

struct AutotuneResult {
  int learners_per_device = 1;  // the choice
  std::vector<AutotuneDecision> decisions;
  int64_t images_trained = 0;  // by the trial iterations (they train the model too)
};

// Picks the number of learners per device: starts with one and adds one at a time while memory
// allows; a setting whose throughput beats the best so far by more than the threshold (in its
// confirmation too, with confirm_adds) becomes the choice, and after `look_ahead` settings in a
// row that do not, it steps back to the choice and stops. A setting whose measurement throws
// OutOfMemoryError (a learner that did not fit) stops the search at the choice, as does one
// that throws AutotuneStopped. Each decision is logged with the throughput it saw.
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
  AutotuneResult Run(const Measure& measure, const Memory& memory, size_t limit) const;

  AutotunerOptions options_;
};

}  // namespace crossbow
