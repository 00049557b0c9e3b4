#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "crossbow/core/batch_source.h"
#include "crossbow/engine/autotuner.h"
#include "crossbow/engine/engine.h"
#include "crossbow/train/checkpoint.h"
#include "crossbow/train/lr_policy.h"

namespace crossbow {

struct TrainerOptions {
  // Stop conditions; training stops at the first one met. At least one of epochs, iterations
  // and time_limit_s must be set.
  int64_t epochs = 0;
  int64_t iterations = 0;  // engine iterations (each trains every learner on one batch)
  double time_limit_s = 0;
  double target_accuracy = 0;  // z's test top-1; 0: never stops on accuracy

  LrPolicyOptions lr;      // positions in epochs; poly's max defaults to the run's length
  int64_t eval_every = 0;  // iterations between evaluations of z; 0: after every epoch
  bool autotune = false;   // --learners auto: the autotuner picks the learners per device
  double autotune_threshold = AutotunerOptions{}.threshold;
  double autotune_seconds = AutotunerOptions{}.window_seconds;
  bool autotune_confirm = AutotunerOptions{}.confirm_adds;
  bool autotune_only = false;  // stop once the learner count is chosen: the trials are the run

  std::string checkpoint_dir;  // empty: no checkpoints
  double checkpoint_every_epochs = 1;
  double checkpoint_every_minutes = 0;  // 0: by epochs only
  bool resume = false;                  // continue from checkpoint_dir's checkpoint if any

  std::string metrics_path;  // JSON lines; empty: none
  int64_t log_every = 50;    // iterations between training records
  bool progress = true;      // the progress bar on stderr
  // Seconds without a finished iteration (or evaluation batch) after which the run is taken
  // to be stuck and ends with a report of what each thread waits for; 0: never.
  double stall_timeout_s = 300;
  // Mixup and CutMix of the training source's batches (its SetMix); evaluation never mixes.
  MixOptions mix;
};

// The autotuner's options that TrainerOptions sets (threshold, window, confirmation), for the
// trainer and crossbow_bench alike.
AutotunerOptions AutotunerOptionsOf(const TrainerOptions& options);

struct TrainResult {
  // "epochs", "iterations", "time_limit", "target_accuracy", "autotuned", "signal (SIGINT)",
  // "signal (SIGTERM)"
  std::string stop_reason;
  int signal = 0;  // the signal that stopped training, or 0
  int64_t iterations = 0;
  double epochs = 0;
  double elapsed_s = 0;  // training time, evaluations and checkpoint writes excluded
  double images_per_s = 0;
  int learners_per_device = 0;
  std::optional<EvalResult> test;  // the last evaluation of z
  double best_top1 = 0;
  double time_to_accuracy_s = -1;  // -1: target not reached (or none)
  int64_t skipped_batches = 0;     // learner batches skipped for a non-finite loss (skip_nan)
  bool resumed = false;
  int ranks = 1;  // processes of the MPI job; the counts above are over all of them
  std::vector<AutotuneDecision> autotune;  // the autotuner's decisions, when it ran
};

// The result as a JSON object with those names, but: test_loss, accuracy and top5 for `test`
// (null before any evaluation), best_accuracy, null time_to_accuracy_s where the target was not
// reached, autotune as [{learners_per_device, images_per_s, action}]; a number that is not
// finite (a diverged test loss) as null. The dict that
// Trainer.fit() returns in Python and the line crossbow_train prints.
std::string TrainResultJson(const TrainResult& result);

// The training loop, in C++: learning-rate schedule, evaluation of the average model,
// stopping rules, checkpoints (also on SIGINT/SIGTERM) and metrics. Options are checked in
// the constructor, before the engine compiles anything.
//
// Across the ranks of an MPI job (EngineOptions::group) every rank runs the same loop: the
// constructor checks that all ranks started alike (CheckRanksAgree), each iteration they agree
// on the images trained, the loss, signals and time limits, so that they decide alike; rank 0
// evaluates z, writes metrics and checkpoints (with every rank's learners), and draws progress.
class Trainer {
 public:
  Trainer(const LearnerSpec& spec, EngineOptions engine_options, BatchSource* train,
          BatchSource* test, TrainerOptions options);
  ~Trainer();
  TrainResult Fit();
  Engine& engine() { return *engine_; }

 private:
  class Loop;
  void Start(const LearnerSpec& spec, EngineOptions engine_options);

  std::shared_ptr<ProcessGroup> group_;
  std::chrono::milliseconds timeout_;  // of collectives across ranks
  std::string net_;
  std::string net_source_;  // kept in checkpoints (LearnerSpec::source)
  std::string sync_;
  bool learners_fixed_;
  BatchSource* train_;
  BatchSource* test_;
  TrainerOptions options_;
  double restart_drop_;
  std::unique_ptr<Checkpoint> resume_from_;  // read by the constructor, restored by Fit
  std::unique_ptr<Engine> engine_;
};

}  // namespace crossbow
