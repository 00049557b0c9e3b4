#include "crossbow/engine/trainer.h"

#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iostream>

#include "crossbow/engine/checkpoint.h"
#include "crossbow/engine/metrics.h"
#include "crossbow/engine/stop_signal.h"
#include "crossbow/engine/trainer_config.h"

namespace crossbow {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

const char* SyncName(SyncMode mode) {
  switch (mode) {
    case SyncMode::kSMA:
      return "sma";
    case SyncMode::kSSGD:
      return "ssgd";
    case SyncMode::kSGD:
      return "sgd";
  }
  return "?";
}

}  // namespace

Trainer::Trainer(const LearnerSpec& spec, EngineOptions engine_options, BatchSource* train,
                 BatchSource* test, TrainerOptions options)
    : net_(spec.name),
      sync_(SyncName(engine_options.sync)),
      learners_fixed_(!options.autotune),
      train_(train),
      test_(test),
      options_(std::move(options)) {
  CheckTrainerOptions(options_, spec.input_shape, train, test);
  const TrainerOptions& o = options_;
  if (options_.lr.policy == "poly" && options_.lr.max <= 0 && o.epochs > 0) {
    options_.lr.max = static_cast<double>(o.epochs);
  }
  LrPolicy check(options_.lr);  // a bad schedule fails here, before any work
  if (!o.checkpoint_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.checkpoint_dir, ec);
    CROSSBOW_ENFORCE(std::filesystem::is_directory(o.checkpoint_dir), "cannot create checkpoint ",
                     "directory '", o.checkpoint_dir, "': ", ec.message());
    RemoveStaleTemporaries(o.checkpoint_dir);
  }
  // The engine starts at the schedule's first rate, or, resuming, at the rate the learners
  // last restarted from, so that its restarts from z happen where the first run's did.
  LearnerSpec engine_spec = spec;
  engine_spec.solver.lr = check.At(0);
  const std::string path = o.checkpoint_dir.empty() ? "" : CheckpointPath(o.checkpoint_dir);
  if (o.resume && std::filesystem::exists(path)) {
    resume_from_ = std::make_unique<Checkpoint>(ReadCheckpoint(path));
    const CheckpointInfo& info = resume_from_->info;
    CROSSBOW_ENFORCE_VALUE(info.sync == sync_, "checkpoint '", path, "' was trained with --sync ",
                           info.sync, ", this run uses ", sync_);
    engine_spec.solver.lr = info.lr_peak;
    if (!learners_fixed_) engine_options.learners_per_device = info.learners_per_device;
  }
  restart_drop_ = engine_options.restart_drop;
  engine_ = std::make_unique<Engine>(engine_spec, std::move(engine_options), train);
}

Trainer::~Trainer() = default;

// The state of one Fit(): counters, clocks, and the steps of the loop.
class Trainer::Loop {
 public:
  explicit Loop(Trainer* t) : t_(*t), o_(t->options_), engine_(*t->engine_) {}

  TrainResult Run();

 private:
  double EpochPosition() const { return static_cast<double>(info_.images) / epoch_size_; }
  double Elapsed() const { return info_.elapsed_s + Since(segment_start_); }
  void Resume(const std::string& path, const LrPolicy& policy);

  void Autotune();
  void Step(double lr);
  MetricsRecord Record();
  void Evaluate(MetricsRecord* record);
  void SaveCheckpoint();
  void DrawProgress(int64_t epochs_done);
  std::string ShouldStop();

  Trainer& t_;
  const TrainerOptions& o_;
  Engine& engine_;
  int64_t epoch_size_ = t_.train_->EpochSize();
  CheckpointInfo info_;
  TrainResult result_;
  Clock::time_point segment_start_ = Clock::now();  // training time = sum of segments
  Clock::time_point last_checkpoint_ = Clock::now();
  // Since the last metrics record.
  double window_loss_ = 0;
  int64_t window_iterations_ = 0, window_images_ = 0;
  double window_start_s_ = 0;
  std::unique_ptr<MetricsLog> metrics_;
  ProgressBar bar_{&std::cerr};
};

TrainResult Trainer::Fit() { return Loop(this).Run(); }

TrainResult Trainer::Loop::Run() {
  StopSignalScope signals;
  LrPolicy policy(o_.lr);
  info_.net = t_.net_;
  info_.sync = t_.sync_;
  info_.lr = info_.lr_peak = policy.At(0);
  if (t_.resume_from_) {
    Resume(CheckpointPath(o_.checkpoint_dir), policy);
  } else {
    if (o_.resume) LOG(INFO) << "no checkpoint in '" << o_.checkpoint_dir << "': starting anew";
  }
  if (!o_.metrics_path.empty()) {
    metrics_ = std::make_unique<MetricsLog>(o_.metrics_path, result_.resumed);
  }
  segment_start_ = Clock::now();
  // The trial iterations train the model, so they count as training time and images.
  if (o_.autotune && !t_.resume_from_) Autotune();
  window_start_s_ = Elapsed();
  int64_t epochs_done = info_.images / epoch_size_;
  for (;;) {
    Step(policy.At(EpochPosition()));
    const int64_t iteration = engine_.iteration();
    const bool epoch_end = info_.images / epoch_size_ > epochs_done;
    epochs_done = info_.images / epoch_size_;
    const bool evaluate =
        t_.test_ != nullptr && (o_.eval_every > 0 ? iteration % o_.eval_every == 0 : epoch_end);
    if (iteration % o_.log_every == 0 || evaluate || epoch_end) {
      MetricsRecord record = Record();
      if (evaluate) Evaluate(&record);
      if (metrics_) metrics_->Write(record);
      if (epoch_end) {
        bar_.Finish();
        LOG(INFO) << EpochLine(epochs_done, o_.epochs, record);
      }
    }
    result_.stop_reason = ShouldStop();
    if (o_.progress && result_.stop_reason.empty()) DrawProgress(epochs_done);
    const bool checkpoint_due =
        (epoch_end && o_.checkpoint_every_epochs > 0 &&
         std::fmod(static_cast<double>(epochs_done), o_.checkpoint_every_epochs) == 0) ||
        (o_.checkpoint_every_minutes > 0 &&
         Since(last_checkpoint_) >= 60 * o_.checkpoint_every_minutes);
    if (!o_.checkpoint_dir.empty() && (checkpoint_due || !result_.stop_reason.empty())) {
      SaveCheckpoint();
    }
    if (!result_.stop_reason.empty()) break;
  }
  bar_.Finish();
  info_.elapsed_s = Elapsed();
  result_.iterations = engine_.iteration();
  result_.epochs = EpochPosition();
  result_.elapsed_s = info_.elapsed_s;
  result_.images_per_s = info_.images / std::max(1e-9, info_.elapsed_s);
  result_.learners_per_device = engine_.learners_per_device();
  result_.best_top1 = info_.best_top1;
  result_.time_to_accuracy_s = info_.time_to_accuracy_s;
  LOG(INFO) << "training stopped (" << result_.stop_reason << ") after " << result_.iterations
            << " iterations, " << result_.epochs << " epochs, " << FormatDuration(info_.elapsed_s)
            << ", " << result_.images_per_s << " images/s";
  return result_;
}

void Trainer::Loop::Resume(const std::string& path, const LrPolicy& policy) {
  std::unique_ptr<Checkpoint> c = std::move(t_.resume_from_);
  CheckCompatible(*c, path, t_.net_, engine_.StateTensors());
  info_ = c->info;
  engine_.SetLearningRate(info_.lr);  // a drop here restarts from z as the first run did
  engine_.RestoreState(c->tensors, info_.iteration);
  t_.train_->RestoreState(c->train_state);
  result_.resumed = true;
  LOG(INFO) << "resumed from '" << path << "' at iteration " << info_.iteration << ", epoch "
            << EpochPosition() << ", " << engine_.learners_per_device()
            << " learner(s) per device (the checkpoint had " << c->info.learners_per_device << ")";
}

void Trainer::Loop::Autotune() {
  if (t_.sync_ == "sgd") {
    LOG(INFO) << "autotuner: sgd trains exactly one learner, nothing to tune";
    return;
  }
  AutotunerOptions options;
  options.threshold = o_.autotune_threshold;
  AutotuneResult tuned = Autotuner(options).Run(&engine_);
  info_.images += tuned.images_trained;
  result_.autotune = tuned.decisions;
}

void Trainer::Loop::Step(double lr) {
  if (lr != info_.lr) {
    engine_.SetLearningRate(lr);
    info_.lr = lr;
    // The engine's rule (EngineOptions::restart_drop), followed to checkpoint it.
    info_.lr_peak = std::max(info_.lr_peak, lr);
    if (lr < info_.lr_peak && lr <= t_.restart_drop_ * info_.lr_peak) info_.lr_peak = lr;
  }
  IterationResult r;
  try {
    r = engine_.Iterate();
  } catch (const Error& e) {
    bar_.Finish();
    CROSSBOW_FAIL("training stopped at iteration ", engine_.iteration() + 1, ": ", e.what());
  }
  if (r.skipped > 0) {
    result_.skipped_batches += r.skipped;
    LOG(WARNING) << "iteration " << engine_.iteration() << ": " << r.skipped
                 << " learner(s) had a non-finite loss and skipped their batch (--skip-nan)";
  }
  info_.images += r.images;
  info_.iteration = engine_.iteration();
  if (r.skipped < static_cast<int>(r.learner_losses.size())) {
    window_loss_ += r.loss;
    ++window_iterations_;
  }
  window_images_ += r.images;
}

MetricsRecord Trainer::Loop::Record() {
  MetricsRecord r;
  r.iteration = engine_.iteration();
  r.epoch = EpochPosition();
  r.time_s = Elapsed();
  r.loss = window_iterations_ ? window_loss_ / window_iterations_ : NAN;
  r.lr = info_.lr;
  r.images_per_s = window_images_ / std::max(1e-9, r.time_s - window_start_s_);
  r.learners_per_device = engine_.learners_per_device();
  r.distances = engine_.DistancesToAverage();
  window_loss_ = 0;
  window_iterations_ = window_images_ = 0;
  window_start_s_ = r.time_s;
  return r;
}

// Evaluation time is not training time: the clock stops around it.
void Trainer::Loop::Evaluate(MetricsRecord* record) {
  info_.elapsed_s = Elapsed();
  record->test = engine_.Evaluate(t_.test_);
  info_.best_top1 = std::max(info_.best_top1, record->test->top1);
  if (o_.target_accuracy > 0 && info_.time_to_accuracy_s < 0 &&
      record->test->top1 >= o_.target_accuracy) {
    info_.time_to_accuracy_s = info_.elapsed_s;
    LOG(INFO) << "reached " << o_.target_accuracy * 100 << "% test accuracy after "
              << FormatDuration(info_.elapsed_s) << " (iteration " << record->iteration << ")";
  }
  result_.test = record->test;
  segment_start_ = Clock::now();
}

void Trainer::Loop::SaveCheckpoint() {
  info_.elapsed_s = Elapsed();
  info_.iteration = engine_.iteration();
  info_.learners_per_device = engine_.learners_per_device();
  const std::string path = CheckpointPath(o_.checkpoint_dir);
  WriteCheckpoint(path, info_, t_.train_->SaveState(), engine_.StateTensors());
  VLOG(1) << "checkpoint '" << path << "' at iteration " << info_.iteration;
  last_checkpoint_ = Clock::now();
  segment_start_ = Clock::now();
}

// Of the limit nearest to being met: training stops at the first one.
void Trainer::Loop::DrawProgress(int64_t epochs_done) {
  double fraction = 0;
  if (o_.epochs > 0) fraction = EpochPosition() / o_.epochs;
  if (o_.iterations > 0) {
    fraction = std::max(fraction, static_cast<double>(engine_.iteration()) / o_.iterations);
  }
  if (o_.time_limit_s > 0) fraction = std::max(fraction, Elapsed() / o_.time_limit_s);
  const double rate = window_images_ / std::max(1e-9, Elapsed() - window_start_s_);
  const double eta = fraction > 0 ? (1 - fraction) / fraction * Elapsed() : -1;
  const std::string label = "epoch " + std::to_string(epochs_done + 1) +
                            (o_.epochs > 0 ? "/" + std::to_string(o_.epochs) : "");
  bar_.Update(label, fraction, rate, eta,
              window_iterations_ ? window_loss_ / window_iterations_ : 0);
}

std::string Trainer::Loop::ShouldStop() {
  if (int signal = StopSignalScope::received()) {
    return signal == SIGINT ? "signal (SIGINT)" : "signal (SIGTERM)";
  }
  if (o_.target_accuracy > 0 && info_.time_to_accuracy_s >= 0) return "target_accuracy";
  if (o_.epochs > 0 && info_.images >= o_.epochs * epoch_size_) return "epochs";
  if (o_.iterations > 0 && engine_.iteration() >= o_.iterations) return "iterations";
  if (o_.time_limit_s > 0 && Elapsed() >= o_.time_limit_s) return "time_limit";
  return "";
}

}  // namespace crossbow
