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
#include "crossbow/train/trainer_loop.h"
#include "crossbow/train/trainer_options.h"
#include "crossbow/train/trainer_ranks.h"
#include "crossbow/train/watchdog.h"

namespace crossbow {
using trainer_loop::Clock;
using trainer_loop::Since;

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

AutotunerOptions AutotunerOptionsOf(const TrainerOptions& options) {
  AutotunerOptions out;
  out.threshold = options.autotune_threshold;
  out.window_seconds = options.autotune_seconds;
  out.confirm_adds = options.autotune_confirm;
  return out;
}

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
    watchdog_.Trained(info_.iteration);
    watchdog_.Checkpointed(info_.iteration);
  } else {
    if (o_.resume) LOG(INFO) << "no checkpoint in '" << o_.checkpoint_dir << "': starting anew";
  }
  if (!o_.metrics_path.empty() && rank_ == 0) {
    metrics_ = std::make_unique<MetricsLog>(
        o_.metrics_path, result_.resumed ? std::optional<int64_t>(info_.iteration) : std::nullopt);
  }
  segment_start_ = Clock::now();
  SetRate(info_.lr, policy.MomentumAt(EpochPosition()));
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
    SetRate(scale * policy.At(EpochPosition()), policy.MomentumAt(EpochPosition()));
    const std::optional<double> ahead = RateAhead(scale, policy, epochs_done);
    Step(ahead, policy.MomentumAt(static_cast<double>(ImagesAfterNext()) / epoch_size_));
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
  AutotunerOptions options = AutotunerOptionsOf(o_);
  // The trials train the model: they count, and they end with the run's budget or a signal.
  options.after_iteration = [this](IterationResult r) {
    watchdog_.Progress();
    Agree(&r);
    info_.images += r.images;
    info_.iteration = engine_.iteration();
    watchdog_.Trained(info_.iteration);
    return !ShouldStop().empty();
  };
  options.goes_on = [this] {
    return StopReason(engine_.iteration() + 1, ImagesAfterNext()).empty();
  };
  result_.autotune = Autotuner(options).Run(&engine_).decisions;
}

void Trainer::Loop::SetRate(double lr, double momentum) {
  if (!posted_ahead_ && !std::isnan(momentum)) engine_.SetMomentum(momentum);
  if (posted_ahead_) lr = engine_.learning_rate();  // the rate it was posted at
  if (lr != info_.lr) {
    if (!posted_ahead_) engine_.SetLearningRate(lr);
    info_.lr = lr;
    // The engine's rule, followed to checkpoint the peak it restarts against.
    info_.lr_peak = std::max(info_.lr_peak, lr);
    if (IsRestartingDrop(lr, info_.lr_peak, t_.restart_drop_)) info_.lr_peak = lr;
  }
}

void Trainer::Loop::Step(std::optional<double> next_rate, double next_momentum) {
  IterationResult r;
  try {
    r = engine_.Iterate(next_rate, next_rate && !std::isnan(next_momentum)
                                       ? std::optional<double>(next_momentum)
                                       : std::nullopt);
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
  watchdog_.Trained(info_.iteration);
  since_record_.Add(r);
  this_epoch_.Add(r);
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

void Trainer::Loop::SaveCheckpoint() {
  watchdog_.Enter(Watchdog::Phase::kCheckpointing);
  info_.elapsed_s = Elapsed();
  info_.iteration = engine_.iteration();
  info_.learners_per_device = engine_.learners_per_device();
  const std::string path = CheckpointPath(o_.checkpoint_dir);
  auto tensors = engine_.StateTensors();
  if (t_.group_) {
    tensors = GatherStateTensors(*t_.group_, tensors, info_.iteration, &received_, t_.timeout_);
  }
  if (rank_ == 0) WriteCheckpoint(path, info_, t_.train_->SaveState(), tensors);
  watchdog_.Checkpointed(info_.iteration);
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

}  // namespace crossbow
