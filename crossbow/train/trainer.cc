#include "crossbow/train/trainer.h"

#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "crossbow/train/checkpoint.h"
#include "crossbow/train/metrics.h"
#include "crossbow/train/stop_signal.h"
#include "crossbow/train/trainer_config.h"
#include "crossbow/train/trainer_options.h"
#include "crossbow/train/trainer_ranks.h"
#include "crossbow/train/watchdog.h"

namespace crossbow {
namespace {

using Clock = std::chrono::steady_clock;

// How long a stop signal may wait for the loop to reach the end of an iteration (or of a
// checkpoint write) before the watchdog ends the process without a checkpoint.
constexpr double kSignalGraceS = 5;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Trainer::Trainer(const LearnerSpec& spec, EngineOptions engine_options, BatchSource* train,
                 BatchSource* test, TrainerOptions options)
    : group_(engine_options.group),
      timeout_(engine_options.collective_timeout_ms),
      net_(spec.name),
      net_source_(spec.source),
      sync_(engine_options.sync),
      learners_fixed_(!options.autotune),
      train_(train),
      test_(test),
      options_(std::move(options)) {
  if (!group_) {
    Start(spec, std::move(engine_options));
    return;
  }
  // Every rank reports its settings or its failure, so that all stop alike before training.
  std::string error;
  try {
    Start(spec, std::move(engine_options));
  } catch (const std::exception& e) {
    error = e.what();
  }
  RankSettings settings;
  if (error.empty()) {
    settings = TrainerSettings(spec, engine_->options(), options_, *train_, test_, *engine_,
                               resume_from_ ? resume_from_->info.iteration : -1);
  }
  CheckRanksAgree(*group_, settings, error, timeout_);
}

void Trainer::Start(const LearnerSpec& spec, EngineOptions engine_options) {
  CheckEngineOptions(engine_options);
  CheckTrainerOptions(options_);
  CheckTrainerSources(options_, spec.input_shape, train_, test_);
  CROSSBOW_ENFORCE_VALUE(!options_.mix.active() || train_->SetMix(options_.mix),
                         "mixup_alpha (--mixup-alpha) and cutmix_alpha (--cutmix-alpha) need a "
                         "training source that mixes its batches (an LMDB's loader); this one "
                         "cannot (numpy arrays, for one)");
  const TrainerOptions& o = options_;
  options_.lr = Schedule(options_);
  LrPolicy check(options_.lr);
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
  engine_ = std::make_unique<Engine>(engine_spec, std::move(engine_options), train_);
}

Trainer::~Trainer() = default;

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
  // The images of an iteration whose batches are full: no fewer than any iteration has.
  int64_t FullIterationImages() const { return JobLearners() * t_.train_->batch_size(); }
  double Elapsed() const { return info_.elapsed_s + Since(segment_start_); }
  void Resume(const std::string& path, const LrPolicy& policy);

  void Autotune();
  void SetRate(double lr);
  // One iteration; with `next_rate`, the next is posted ahead at that rate (Engine::Iterate).
  void Step(std::optional<double> next_rate = std::nullopt);
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
  Clock::time_point segment_start_ = Clock::now();  // training time = sum of segments
  Clock::time_point last_checkpoint_ = Clock::now();
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
  Watchdog watchdog_{o_.stall_timeout_s, kSignalGraceS, [this] { return engine_.DescribeWaits(); }};
  std::vector<std::map<std::string, Tensor>> received_;  // other ranks' learners (checkpoints)
};

TrainResult Trainer::Fit() { return Loop(this).Run(); }

std::string TrainResultJson(const TrainResult& r) {
  using nlohmann::json;
  json autotune = json::array();
  for (const AutotuneDecision& a : r.autotune) {
    autotune.push_back({{"learners_per_device", a.learners_per_device},
                        {"images_per_s", a.images_per_second},
                        {"action", a.action}});
  }
  return json{
      {"stop_reason", r.stop_reason},
      {"signal", r.signal},
      {"iterations", r.iterations},
      {"epochs", r.epochs},
      {"elapsed_s", r.elapsed_s},
      {"images_per_s", r.images_per_s},
      {"learners_per_device", r.learners_per_device},
      {"test_loss", r.test ? json(r.test->loss) : json()},
      {"accuracy", r.test ? json(r.test->top1) : json()},
      {"top5", r.test ? json(r.test->top5) : json()},
      {"best_accuracy", r.best_top1},
      {"time_to_accuracy_s", r.time_to_accuracy_s >= 0 ? json(r.time_to_accuracy_s) : json()},
      {"skipped_batches", r.skipped_batches},
      {"resumed", r.resumed},
      {"ranks", r.ranks},
      {"autotune", autotune}}
      .dump();
}

TrainResult Trainer::Loop::Run() {
  StopSignalScope signals;
  LrPolicy policy(o_.lr);
  info_.net = t_.net_;
  info_.net_source = t_.net_source_;
  info_.sync = t_.sync_;
  info_.lr = info_.lr_peak = policy.At(0);
  info_.options = RunOptions();
  if (t_.resume_from_) {
    Resume(CheckpointPath(o_.checkpoint_dir), policy);
  } else {
    if (o_.resume) LOG(INFO) << "no checkpoint in '" << o_.checkpoint_dir << "': starting anew";
  }
  if (!o_.metrics_path.empty() && rank_ == 0) {
    metrics_ = std::make_unique<MetricsLog>(
        o_.metrics_path, result_.resumed ? std::optional<int64_t>(info_.iteration) : std::nullopt);
  }
  segment_start_ = Clock::now();
  // The trial iterations train the model, so they count as training time and images.
  if (o_.autotune && !result_.resumed) Autotune();  // a resume keeps the checkpoint's count
  autotuned_ = true;
  since_record_ = this_epoch_ = Window{Elapsed()};
  EpochCheckpointDue();  // counts the intervals already behind a resumed run
  int64_t epochs_done = info_.images / epoch_size_;
  // A resumed run that had finished trains no more; a run whose budget the autotuner's trials
  // spent (or that a signal stopped during them) stops as training does.
  result_.stop_reason = ShouldStop();
  if (!result_.stop_reason.empty() && !result_.resumed) Stop(/*evaluated=*/false);
  const double scale =
      LearnerScale(o_.lr.learner_scaling, JobLearners(), engine_.learners_are_the_model());
  if (scale != 1) {
    LOG(INFO) << "learning rate x" << scale << " for " << JobLearners() << " learners (--lr-"
              << "learner-scaling " << o_.lr.learner_scaling << ")";
  }
  while (result_.stop_reason.empty()) {
    SetRate(scale * policy.At(EpochPosition()));
    Step(RateAhead(scale, policy, epochs_done));
    // A clock or a signal can make something due after an iteration that posted the next:
    // that one runs first.
    if (posted_ahead_ && !QuietAfter(engine_.iteration(), info_.images, epochs_done)) Step();
    const int64_t iteration = engine_.iteration();
    const auto [epoch_end, evaluate, record_due] = DueAfter(iteration, info_.images, epochs_done);
    epochs_done = info_.images / epoch_size_;
    if (record_due) {
      const MetricsRecord record = Log(evaluate);
      if (epoch_end) {
        bar_.Finish();
        LOG(INFO) << EpochLine(epochs_done, o_.epochs, record);
      }
    }
    if (epoch_end) this_epoch_ = Window{Elapsed()};
    result_.stop_reason = ShouldStop();
    if (!result_.stop_reason.empty()) {
      Stop(evaluate);
    } else {
      if (o_.progress && rank_ == 0) DrawProgress(epochs_done);
      if (!o_.checkpoint_dir.empty() && (EpochCheckpointDue() || minutes_due_)) SaveCheckpoint();
    }
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
  result_.ranks = t_.group_ ? t_.group_->size() : 1;
  result_.signal = signal_;
  LOG(INFO) << "training stopped (" << result_.stop_reason << ") after " << result_.iterations
            << " iterations, " << result_.epochs << " epochs, " << FormatDuration(info_.elapsed_s)
            << ", " << result_.images_per_s << " images/s";
  return result_;
}

void Trainer::Loop::Resume(const std::string& path, const LrPolicy& policy) {
  std::unique_ptr<Checkpoint> c = std::move(t_.resume_from_);
  CheckCompatible(*c, path, t_.net_, engine_.StateTensors());
  info_ = c->info;
  info_.options = RunOptions();
  for (const auto& [name, value] : info_.options) {
    const auto it = c->info.options.find(name);
    if (it != c->info.options.end() && it->second != value) {
      LOG(WARNING) << "resuming with " << name << " " << value << "; the checkpoint's run had "
                   << it->second;
    }
  }
  engine_.SetLearningRate(info_.lr);  // a drop here restarts from z as the first run did
  engine_.RestoreState(c->tensors, info_.iteration);
  t_.train_->RestoreState(c->train_state);
  result_.resumed = true;
  LOG(INFO) << "resumed from '" << path << "' at iteration " << info_.iteration << ", epoch "
            << EpochPosition() << ", " << engine_.learners_per_device()
            << " learner(s) per device (the checkpoint had " << c->info.learners_per_device << ")";
}

void Trainer::Loop::Stop(bool evaluated) {
  if (!evaluated && t_.test_ != nullptr && !signal_) Log(true);
  if (!o_.checkpoint_dir.empty()) SaveCheckpoint();
}

void Trainer::Loop::Autotune() {
  if (t_.sync_ == "sgd") {
    LOG(INFO) << "autotuner: sgd trains exactly one learner, nothing to tune";
    return;
  }
  AutotunerOptions options;
  options.threshold = o_.autotune_threshold;
  // The trials train the model: they count, and they end with the run's budget or a signal.
  options.after_iteration = [this](IterationResult r) {
    watchdog_.Progress();
    Agree(&r);
    info_.images += r.images;
    info_.iteration = engine_.iteration();
    return !ShouldStop().empty();
  };
  options.goes_on = [this] {
    return StopReason(engine_.iteration() + 1, info_.images + FullIterationImages()).empty();
  };
  result_.autotune = Autotuner(options).Run(&engine_).decisions;
}

void Trainer::Loop::SetRate(double lr) {
  if (posted_ahead_) lr = engine_.learning_rate();  // the rate it was posted at
  if (lr != info_.lr) {
    if (!posted_ahead_) engine_.SetLearningRate(lr);
    info_.lr = lr;
    // The engine's rule, followed to checkpoint the peak it restarts against.
    info_.lr_peak = std::max(info_.lr_peak, lr);
    if (IsRestartingDrop(lr, info_.lr_peak, t_.restart_drop_)) info_.lr_peak = lr;
  }
}

void Trainer::Loop::Step(std::optional<double> next_rate) {
  IterationResult r;
  try {
    r = engine_.Iterate(next_rate);
    posted_ahead_ = next_rate.has_value();
  } catch (const Error& e) {
    bar_.Finish();
    const int64_t failed = engine_.failed_iteration();
    CROSSBOW_FAIL("training stopped at iteration ",
                  (failed >= 0 ? failed : engine_.iteration()) + 1, ": ", e.what());
  }
  watchdog_.Progress();
  Agree(&r);
  if (r.skipped > 0) {
    result_.skipped_batches += r.skipped;
    LOG(WARNING) << "iteration " << engine_.iteration() << ": " << r.skipped
                 << " learner(s) had a non-finite loss and skipped their batch (--skip-nan)";
  }
  info_.images += r.images;
  info_.iteration = engine_.iteration();
  since_record_.Add(r);
  this_epoch_.Add(r);
}

Trainer::Loop::Due Trainer::Loop::DueAfter(int64_t iteration, int64_t images,
                                           int64_t epochs_done) const {
  Due due;
  due.epoch_end = images / epoch_size_ > epochs_done;
  due.evaluate =
      t_.test_ != nullptr && (o_.eval_every > 0 ? iteration % o_.eval_every == 0 : due.epoch_end);
  due.record = iteration % o_.log_every == 0 || due.evaluate || due.epoch_end;
  return due;
}

bool Trainer::Loop::QuietAfter(int64_t iteration, int64_t images, int64_t epochs_done) const {
  if (DueAfter(iteration, images, epochs_done).record || !StopReason(iteration, images).empty()) {
    return false;
  }
  return o_.checkpoint_dir.empty() ||
         (!minutes_due_ &&
          (o_.checkpoint_every_epochs <= 0 || CheckpointPeriods(images) <= checkpoint_periods_));
}

std::optional<double> Trainer::Loop::RateAhead(double scale, const LrPolicy& policy,
                                               int64_t epochs_done) const {
  // The images after this iteration if it is a full one: no fewer than it will have.
  const int64_t images = info_.images + FullIterationImages();
  if (!QuietAfter(engine_.iteration() + 1, images, epochs_done)) return std::nullopt;
  const double next = scale * policy.At(static_cast<double>(images) / epoch_size_);
  if (engine_.RestartsAt(next)) return std::nullopt;
  return next;
}

void Trainer::Loop::Agree(IterationResult* r) {
  const int finite = static_cast<int>(r->learner_losses.size()) - r->skipped;
  signal_ = StopSignalScope::received();
  time_up_ = o_.time_limit_s > 0 && Elapsed() >= o_.time_limit_s;
  minutes_due_ = o_.checkpoint_every_minutes > 0 &&
                 Since(last_checkpoint_) >= 60 * o_.checkpoint_every_minutes;
  if (!t_.group_) return;
  const std::vector<double> all = AllGatherDoubles(
      *t_.group_,
      {static_cast<double>(r->images), finite > 0 ? r->loss * finite : 0.0,
       static_cast<double>(finite), static_cast<double>(r->skipped), static_cast<double>(signal_),
       static_cast<double>(time_up_), static_cast<double>(minutes_due_)},
      t_.timeout_);
  constexpr size_t kFields = 7;
  double images = 0, loss = 0, finites = 0, skipped = 0;
  signal_ = 0;
  for (size_t at = 0; at < all.size(); at += kFields) {
    images += all[at];
    loss += all[at + 1];
    finites += all[at + 2];
    skipped += all[at + 3];
    if (signal_ == 0) signal_ = static_cast<int>(all[at + 4]);  // the first rank's that got one
  }
  time_up_ = all[5] != 0;  // rank 0's clock
  minutes_due_ = all[6] != 0;
  r->images = static_cast<int64_t>(images);
  r->loss = finites > 0 ? loss / finites : NAN;
  r->skipped = static_cast<int>(skipped);
}

MetricsRecord Trainer::Loop::Record() {
  MetricsRecord r;
  r.iteration = engine_.iteration();
  r.epoch = EpochPosition();
  r.time_s = Elapsed();
  r.loss = since_record_.MeanLoss();
  r.lr = info_.lr;
  r.images_per_s = since_record_.Rate(r.time_s);
  r.learners_per_device = engine_.learners_per_device();
  r.distances = engine_.DistancesToAverage();
  if (t_.group_) r.distances = AllGatherDoubles(*t_.group_, r.distances, t_.timeout_);
  since_record_ = Window{r.time_s};
  return r;
}

// Evaluation time is not training time: the clock stops around it.
MetricsRecord Trainer::Loop::Log(bool evaluate) {
  MetricsRecord record = Record();
  if (evaluate) Evaluate(&record);
  if (metrics_) metrics_->Write(record);
  return record;
}

void Trainer::Loop::Evaluate(MetricsRecord* record) {
  info_.elapsed_s = Elapsed();
  watchdog_.Enter(Watchdog::Phase::kEvaluating);
  // Rank 0 evaluates (z is the same everywhere) and tells the others. A stop signal cuts an
  // evaluation short: the record then has no test results.
  EvalResult test;
  bool evaluated = false;
  if (rank_ == 0) {
    WatchedSource source(t_.test_, &watchdog_);
    try {
      test = engine_.Evaluate(&source);
      evaluated = true;
    } catch (const WatchedSource::StopRequested&) {
      LOG(INFO) << "evaluation interrupted by a signal";
    }
  }
  if (t_.group_) {
    const std::vector<double> all = AllGatherDoubles(
        *t_.group_, {test.loss, test.top1, test.top5, static_cast<double>(evaluated)}, t_.timeout_);
    test.loss = all[0];
    test.top1 = all[1];
    test.top5 = all[2];
    evaluated = all[3] != 0;
  }
  watchdog_.Enter(Watchdog::Phase::kTraining);
  segment_start_ = Clock::now();
  if (!evaluated) return;
  record->test = test;
  info_.best_top1 = std::max(info_.best_top1, test.top1);
  if (o_.target_accuracy > 0 && info_.time_to_accuracy_s < 0 && test.top1 >= o_.target_accuracy) {
    info_.time_to_accuracy_s = info_.elapsed_s;
    LOG(INFO) << "reached " << o_.target_accuracy * 100 << "% test accuracy after "
              << FormatDuration(info_.elapsed_s) << " (iteration " << record->iteration << ")";
  }
  result_.test = test;
}

int64_t Trainer::Loop::CheckpointPeriods(int64_t images) const {
  // The small slack keeps an interval that the images reach exactly from rounding down.
  const double epochs = static_cast<double>(images) / epoch_size_;
  return static_cast<int64_t>(std::floor(epochs / o_.checkpoint_every_epochs + 1e-9));
}

bool Trainer::Loop::EpochCheckpointDue() {
  if (o_.checkpoint_every_epochs <= 0) return false;
  const int64_t periods = CheckpointPeriods(info_.images);
  const bool due = periods > checkpoint_periods_;
  checkpoint_periods_ = periods;
  return due;
}

void Trainer::Loop::SaveCheckpoint() {
  watchdog_.Enter(Watchdog::Phase::kCheckpointing);
  info_.elapsed_s = Elapsed();
  info_.iteration = engine_.iteration();
  info_.learners_per_device = engine_.learners_per_device();
  const std::string path = CheckpointPath(o_.checkpoint_dir);
  auto tensors = engine_.StateTensors();
  if (t_.group_) tensors = GatherStateTensors(*t_.group_, tensors, &received_, t_.timeout_);
  if (rank_ == 0) WriteCheckpoint(path, info_, t_.train_->SaveState(), tensors);
  VLOG(1) << "checkpoint '" << path << "' at iteration " << info_.iteration;
  watchdog_.Enter(Watchdog::Phase::kTraining);
  last_checkpoint_ = Clock::now();
  segment_start_ = Clock::now();
}

// Of the limit nearest to being met: training stops at the first one.
void Trainer::Loop::DrawProgress(int64_t epochs_done) {
  if (this_epoch_.images == 0) return;  // the epoch has just begun: no rate or loss to show yet
  double fraction = 0;
  if (o_.epochs > 0) fraction = EpochPosition() / o_.epochs;
  if (o_.iterations > 0) {
    fraction = std::max(fraction, static_cast<double>(engine_.iteration()) / o_.iterations);
  }
  if (o_.time_limit_s > 0) fraction = std::max(fraction, Elapsed() / o_.time_limit_s);
  const double eta = fraction > 0 ? (1 - fraction) / fraction * Elapsed() : -1;
  const std::string label = "epoch " + std::to_string(epochs_done + 1) +
                            (o_.epochs > 0 ? "/" + std::to_string(o_.epochs) : "");
  bar_.Update(label, fraction, this_epoch_.Rate(Elapsed()), eta, this_epoch_.MeanLoss());
}

std::string Trainer::Loop::StopReason(int64_t iteration, int64_t images) const {
  if (signal_) return std::string("signal (") + StopSignalName(signal_) + ")";
  if (o_.target_accuracy > 0 && info_.time_to_accuracy_s >= 0) return "target_accuracy";
  if (o_.epochs > 0 && images >= o_.epochs * epoch_size_) return "epochs";
  if (o_.iterations > 0 && iteration >= o_.iterations) return "iterations";
  if (time_up_) return "time_limit";
  if (o_.autotune_only && autotuned_) return "autotuned";
  return "";
}

}  // namespace crossbow
