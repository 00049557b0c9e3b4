#include "crossbow/train/watchdog.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "crossbow/train/stop_signal.h"

namespace crossbow {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);
// A poll this much later than asked for means that the process (or the machine) was suspended:
// SIGSTOP, ^Z, a paused virtual machine. The loop was suspended with it, so that time is not
// the loop's: the clocks move on by it.
constexpr auto kSuspended = std::chrono::seconds(2);
constexpr auto kBeat = std::chrono::seconds(1);

}  // namespace

std::string HeartbeatPath(int rank) {
  const char* dir = std::getenv("CROSSBOW_HEARTBEAT_DIR");
  if (dir == nullptr || *dir == '\0') return "";
  return (std::filesystem::path(dir) / ("rank" + std::to_string(rank) + ".json")).string();
}

Watchdog::Watchdog(double stall_timeout_s, double signal_grace_s,
                   std::function<std::string()> describe, std::string heartbeat, int rank)
    : stall_timeout_s_(stall_timeout_s),
      signal_grace_s_(signal_grace_s),
      describe_(std::move(describe)),
      heartbeat_(std::move(heartbeat)),
      rank_(rank),
      last_progress_(Clock::now().time_since_epoch().count()),
      thread_(&Watchdog::Watch, this) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::Progress() {
  progress_marks_.fetch_add(1);
  const Clock::rep now = Clock::now().time_since_epoch().count();
  const Clock::rep interval = now - last_progress_.exchange(now);
  Clock::rep longest = longest_interval_.load();
  while (interval > longest && !longest_interval_.compare_exchange_weak(longest, interval)) {
  }
}

void Watchdog::Enter(Phase phase) {
  phase_.store(phase);
  Progress();
}

void Watchdog::Checkpointed(int64_t iteration) {
  checkpoint_.store(iteration);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!heartbeat_.empty()) Beat();
}

void Watchdog::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point signalled{};
  Clock::time_point polled = Clock::now(), beaten{};
  while (!wake_.wait_for(lock, kPoll, [this] { return done_; })) {
    const auto now = Clock::now();
    if (!heartbeat_.empty() && now - beaten >= kBeat) {
      Beat();
      beaten = now;
    }
    const Clock::duration late = now - polled - kPoll;
    polled = now;
    if (late > kSuspended) {
      Clock::rep seen = last_progress_.load();
      last_progress_.compare_exchange_strong(seen, seen + late.count());  // unless it just moved
      if (signalled != Clock::time_point{}) signalled += late;
    }
    const double idle_s = std::chrono::duration<double>(
                              now - Clock::time_point(Clock::duration(last_progress_.load())))
                              .count();
    const int signal = StopSignalScope::received();
    if (signal != 0 && signalled == Clock::time_point{}) signalled = now;
    const bool checkpointing = phase_.load() == Phase::kCheckpointing;
    const double grace_s = std::max(
        signal_grace_s_,
        4 * std::chrono::duration<double>(Clock::duration(longest_interval_.load())).count());
    if (signal != 0 && !checkpointing &&
        std::chrono::duration<double>(now - signalled).count() > grace_s) {
      char why[160];
      std::snprintf(why, sizeof(why),
                    "received %s, and training did not stop within %.0f s: exiting without a "
                    "checkpoint (the last one written stays valid)",
                    StopSignalName(signal), grace_s);
      Exit(128 + signal, why);
    }
    if (stall_timeout_s_ > 0 && idle_s > stall_timeout_s_) {
      char why[160];
      std::snprintf(why, sizeof(why),
                    "no iteration finished in %.0f s (--stall-timeout): training is stuck; "
                    "exiting",
                    stall_timeout_s_);
      Exit(1, why);
    }
  }
}

// Replaced by a rename, so that a reader never sees half a beat; a failed write is left for
// the next one (the supervisor sees the beat stop, the training does not).
void Watchdog::Beat() {
  const std::string temporary = heartbeat_ + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << "{\"rank\": " << rank_ << ", \"pid\": " << getpid() << ", \"beat\": " << ++beats_
        << ", \"progress\": " << progress_marks_.load() << ", \"iteration\": " << iteration_.load()
        << ", \"checkpoint\": " << checkpoint_.load() << "}\n";
    if (!out.good()) return;
  }
  std::error_code ec;
  std::filesystem::rename(temporary, heartbeat_, ec);
}

void Watchdog::Exit(int code, const std::string& why) {
  std::cerr << "\ncrossbow: " << why << "\n" << describe_() << std::flush;
  _exit(code);
}

const Batch* WatchedSource::Acquire() {
  if (StopSignalScope::received() != 0) throw StopRequested();
  return source_->Acquire();
}

void WatchedSource::Release(const Batch* batch) {
  source_->Release(batch);
  watchdog_->Progress();
}

}  // namespace crossbow
