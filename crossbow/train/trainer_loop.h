#pragma once

// Trainer::Loop, the state and steps of one Fit(): trainer.cc runs the loop,
// trainer_schedule.cc decides what is due after each iteration.
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "crossbow/train/checkpoint.h"
#include "crossbow/train/lr_policy.h"
#include "crossbow/train/metrics.h"
#include "crossbow/train/trainer.h"
#include "crossbow/train/trainer_options.h"
#include "crossbow/train/watchdog.h"

namespace crossbow {
namespace trainer_loop {

using Clock = std::chrono::steady_clock;

// How long a stop signal may wait for the loop to reach the end of an iteration (or of a
// checkpoint write) before the watchdog ends the process without a checkpoint.
inline constexpr double kSignalGraceS = 5;

inline double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace trainer_loop

// The state of one Fit(): counters, clocks, and the steps of the loop.
class Trainer::Loop {
 public:
  explicit Loop(Trainer* t) : t_(*t), o_(t->options_), engine_(*t->engine_) {}

  TrainResult Run();

 private:
  std::map<std::string, std::string> RunOptions() const {
    const auto options = CheckpointedOptions(engine_.options(), o_);
    return {options.begin(), options.end()};
  }
  double EpochPosition() const { return static_cast<double>(info_.images) / epoch_size_; }
  int JobLearners() const { return engine_.num_learners() * (t_.group_ ? t_.group_->size() : 1); }
  // The images trained once the next iteration has run, if its batches are full: no fewer
  // than it will have.
  int64_t ImagesAfterNext() const {
    return info_.images + int64_t{JobLearners()} * t_.train_->batch_size();
  }
  double Elapsed() const { return info_.elapsed_s + trainer_loop::Since(segment_start_); }
  void Resume(const std::string& path, const LrPolicy& policy);

  void Autotune();
  // The rate, and the momentum of a momentum cycle (NaN: none), of the iterations posted next.
  void SetRate(double lr, double momentum);
  // One iteration; with `next_rate`, the next is posted ahead at that rate and momentum
  // (Engine::Iterate).
  void Step(std::optional<double> next_rate = std::nullopt, double next_momentum = NAN);
  // What is due after an iteration that ends at `iteration` with `images` trained.
  struct Due {
    bool epoch_end = false, evaluate = false, record = false;
  };
  Due DueAfter(int64_t iteration, int64_t images, int64_t epochs_done) const;
  // Whether nothing but the next iteration is due then: no record, checkpoint or stop.
  bool QuietAfter(int64_t iteration, int64_t images, int64_t epochs_done) const;
  // The next iteration's rate if nothing but that iteration is due after this one (no record,
  // evaluation, checkpoint or stop) and the rate restarts no learner; else none.
  std::optional<double> RateAhead(double scale, const LrPolicy& policy, int64_t epochs_done) const;
  // Across ranks: sums the iteration's images, losses and skips, and takes the stop and
  // checkpoint decisions that depend on clocks and signals from one place.
  void Agree(IterationResult* r);
  MetricsRecord Record();
  void Evaluate(MetricsRecord* record);
  // A metrics record of now, with an evaluation if `evaluate`, written to the metrics file.
  MetricsRecord Log(bool evaluate);
  void SaveCheckpoint();
  // As the run stops: a run that stops between evaluations (iterations, time limit,
  // eval_every) evaluates the model it ends with, so that its result is of that model (a
  // signal stops at once); the checkpoint is written.
  void Stop(bool evaluated);
  // Whether the checkpoint interval in epochs (fractions included) has passed since the last.
  bool EpochCheckpointDue();
  // Whole checkpoint intervals in `images`.
  int64_t CheckpointPeriods(int64_t images) const;
  void DrawProgress(int64_t epochs_done);
  std::string ShouldStop() const { return StopReason(engine_.iteration(), info_.images); }
  std::string StopReason(int64_t iteration, int64_t images) const;

  Trainer& t_;
  const TrainerOptions& o_;
  Engine& engine_;
  int64_t epoch_size_ = t_.train_->EpochSize();
  CheckpointInfo info_;
  TrainResult result_;
  trainer_loop::Clock::time_point segment_start_ =
      trainer_loop::Clock::now();  // training time = sum of segments
  trainer_loop::Clock::time_point last_checkpoint_ = trainer_loop::Clock::now();
  // Losses and images since a moment of training time.
  struct Window {
    double start_s = 0, loss = 0;
    int64_t iterations = 0, images = 0;
    void Add(const IterationResult& r) {
      if (std::isfinite(r.loss)) {
        loss += r.loss;
        ++iterations;
      }
      images += r.images;
    }
    double MeanLoss() const { return iterations ? loss / iterations : NAN; }
    double Rate(double now_s) const { return images / std::max(1e-9, now_s - start_s); }
  };
  Window since_record_;  // since the last metrics record
  Window this_epoch_;    // since the epoch began, for the progress bar
  std::unique_ptr<MetricsLog> metrics_;
  ProgressBar bar_;
  const int rank_ = t_.group_ ? t_.group_->rank() : 0;
  // Agreed by every rank after each iteration.
  int signal_ = 0;
  bool time_up_ = false, minutes_due_ = false;
  bool autotuned_ = false;          // the autotuner has chosen (or had nothing to choose)
  int64_t checkpoint_periods_ = 0;  // whole checkpoint_every_epochs intervals at the last one
  bool posted_ahead_ = false;       // the engine holds the next iteration, posted ahead
  Watchdog watchdog_{o_.stall_timeout_s, trainer_loop::kSignalGraceS,
                     [this] { return engine_.DescribeWaits(); }, HeartbeatPath(rank_), rank_};
  std::vector<std::map<std::string, Tensor>> received_;  // other ranks' learners (checkpoints)
};

}  // namespace crossbow
