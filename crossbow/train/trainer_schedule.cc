// What is due after an iteration of the training loop: records, evaluations, checkpoints and
// stops, and from them whether the next iteration may be posted ahead (Engine::Iterate).
#include <cmath>
#include <optional>
#include <string>

#include "crossbow/train/stop_signal.h"
#include "crossbow/train/trainer_loop.h"

namespace crossbow {

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
  const int64_t images = ImagesAfterNext();
  if (!QuietAfter(engine_.iteration() + 1, images, epochs_done)) return std::nullopt;
  const double next = scale * policy.At(static_cast<double>(images) / epoch_size_);
  if (engine_.RestartsAt(next)) return std::nullopt;
  return next;
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
