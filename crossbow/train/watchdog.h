#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "crossbow/core/batch_source.h"

namespace crossbow {

// A thread beside the training loop that ends the process, with the reason and what each
// thread waits for on stderr, when the loop cannot end it itself:
// - no progress (an iteration, an evaluation batch) for `stall_timeout_s` (0: never): exit 1;
// - a SIGINT/SIGTERM (StopSignalScope) after which the loop has not stopped within
//   `signal_grace_s`, or four times the longest interval between two progress marks where that
//   is longer (a loop slowed by a busy machine still reaches its checkpoint; the longest, since
//   the learners of one iteration mark progress moments apart), unless it is writing a
//   checkpoint: exit 128 + the signal.
// A loop that is not stuck stops by itself at the next iteration and never meets either. Time
// the process spends suspended (SIGSTOP, ^Z, a paused machine) counts towards neither.
// With a `heartbeat` path it also tells a supervisor (crossbow launch) that the process lives
// and trains: every second it replaces that file with {"rank", "pid", "beat", "progress",
// "iteration", "checkpoint"}, beat counting the writes (it stops when the process is suspended
// or gone), progress the marks (it stops when training is stuck), iteration the last one trained
// and checkpoint the iteration of the last checkpoint written or resumed from. The supervisor
// compares them with its own earlier reads, so the clocks of the hosts never meet.
class Watchdog {
 public:
  enum class Phase { kTraining, kEvaluating, kCheckpointing };

  Watchdog(double stall_timeout_s, double signal_grace_s, std::function<std::string()> describe,
           std::string heartbeat = "", int rank = 0);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Progress();  // something finished: the stall clock starts again
  void Enter(Phase phase);
  // For the heartbeat: the iteration trained, and that of the checkpoint behind the run (the
  // heartbeat is written at once, so that it names the checkpoint a restart will resume from
  // even if the process dies before the next beat).
  void Trained(int64_t iteration) { iteration_.store(iteration); }
  void Checkpointed(int64_t iteration);

 private:
  using Clock = std::chrono::steady_clock;
  void Watch();
  void Beat();  // with mutex_ held
  [[noreturn]] void Exit(int code, const std::string& why);

  const double stall_timeout_s_, signal_grace_s_;
  const std::function<std::string()> describe_;
  const std::string heartbeat_;
  const int rank_;
  int64_t beats_ = 0;
  std::atomic<int64_t> progress_marks_{0}, iteration_{0}, checkpoint_{0};
  std::atomic<Clock::rep> last_progress_;
  std::atomic<Clock::rep> longest_interval_{0};  // between two progress marks
  std::atomic<Phase> phase_{Phase::kTraining};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Forwards a batch source and tells the watchdog of every batch released; while a stop signal
// is pending it hands out no more batches (Acquire throws StopRequested), so that an evaluation
// ends early instead of holding up the stop.
// The heartbeat file of rank `rank` in the folder that the environment's CROSSBOW_HEARTBEAT_DIR
// names (set by crossbow launch); "" where it is unset.
std::string HeartbeatPath(int rank);

class WatchedSource final : public BatchSource {
 public:
  struct StopRequested : std::exception {
    const char* what() const noexcept override { return "stopped by a signal"; }
  };

  WatchedSource(BatchSource* source, Watchdog* watchdog) : source_(source), watchdog_(watchdog) {}
  Shape ExampleShape() const override { return source_->ExampleShape(); }
  int64_t EpochSize() const override { return source_->EpochSize(); }
  int64_t batch_size() const override { return source_->batch_size(); }
  const Batch* Acquire() override;
  void Release(const Batch* batch) override;
  std::string SaveState() const override { return source_->SaveState(); }
  void RestoreState(const std::string& state) override { source_->RestoreState(state); }
  std::string Describe() const override { return source_->Describe(); }
  std::string DataIdentity() const override { return source_->DataIdentity(); }

 private:
  BatchSource* source_;
  Watchdog* watchdog_;
};

}  // namespace crossbow
