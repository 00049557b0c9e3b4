#include "crossbow/comm/rendezvous.h"

#include "crossbow/core/enforce.h"

namespace crossbow {

Rendezvous::Rendezvous(int size) : size_(size) {
  CROSSBOW_ENFORCE_VALUE(size > 0, "a collectives group needs at least one rank, got ", size);
}

template <typename Ready>
void Rendezvous::Wait(std::unique_lock<std::mutex>& lock,
                      std::chrono::steady_clock::time_point deadline, int rank, const char* phase,
                      Ready ready) {
  const bool ok = cv_.wait_until(lock, deadline, [&] { return !aborted_.empty() || ready(); });
  CROSSBOW_ENFORCE(aborted_.empty(), "all-reduce on rank ", rank, " aborted: ", aborted_);
  if (ok) return;
  aborted_ = detail::Concat("rank ", rank, " timed out ", phase, " (", arrived_, " of ", size_,
                            " ranks had arrived)");
  cv_.notify_all();
  CROSSBOW_FAIL("all-reduce: ", aborted_);
}

void Rendezvous::FailAll(int rank, const std::exception& e) {
  if (aborted_.empty()) aborted_ = detail::Concat("rank ", rank, ": ", e.what());
  cv_.notify_all();
  throw;
}

void Rendezvous::Run(int rank, std::chrono::milliseconds timeout,
                     const std::function<void(bool first)>& arrive,
                     const std::function<void()>& last, const std::function<void()>& leave,
                     const std::function<void()>& unlocked) {
  CROSSBOW_ENFORCE_VALUE(rank >= 0 && rank < size_, "all-reduce: rank ", rank,
                         " is outside the group of ", size_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  Wait(lock, deadline, rank, "waiting for the previous all-reduce to finish",
       [&] { return departed_ == 0 && !done_; });
  arrive(arrived_ == 0);
  if (++arrived_ == size_) {
    try {
      last();
      if (unlocked) {
        lock.unlock();
        unlocked();
        lock.lock();
      }
    } catch (const std::exception& e) {
      if (!lock.owns_lock()) lock.lock();
      FailAll(rank, e);
    }
    done_ = true;
    cv_.notify_all();
  }
  Wait(lock, deadline, rank, "waiting for the other ranks", [&] { return done_; });
  leave();
  if (++departed_ == size_) {
    arrived_ = departed_ = 0;
    done_ = false;
    cv_.notify_all();
  }
}

bool Rendezvous::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool first = aborted_.empty();
  if (first) aborted_ = reason;
  cv_.notify_all();
  return first;
}

void AgreeOnCount(bool first, int rank, size_t count, size_t* agreed) {
  if (first) *agreed = count;
  CROSSBOW_ENFORCE_VALUE(count == *agreed, "all-reduce: rank ", rank, " sends ", count,
                         " floats, another rank sent ", *agreed);
}

std::string Rendezvous::aborted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return aborted_;
}

}  // namespace crossbow
