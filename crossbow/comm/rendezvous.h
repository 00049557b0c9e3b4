#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

namespace crossbow {

// One collective at a time over a fixed group of ranks, one thread per rank: every rank
// arrives, the last to arrive acts for all, and each rank leaves once it has; the next
// collective starts only when every rank has left. The callbacks run under the group's lock.
// Waiting ends with crossbow::Error when the deadline passes (naming the ranks that had
// arrived) or the group is aborted.
class Rendezvous {
 public:
  explicit Rendezvous(int size);

  int size() const { return size_; }
  // arrive(first): this rank posts its part (first: no rank arrived before it); last: runs once, on
  // the last rank's thread; then `unlocked`, if given, on that thread without the group's lock
  // (a slow step, such as a collective across processes, that Abort must not wait for: it may
  // use only what `last` made, since an aborted rank leaves without its result); leave: this rank
  // takes its result (before any rank may start the next collective).
  void Run(int rank, std::chrono::milliseconds timeout,
           const std::function<void(bool first)>& arrive, const std::function<void()>& last,
           const std::function<void()>& leave, const std::function<void()>& unlocked = nullptr);
  // Makes every pending and later Run throw `reason`. Returns false if already aborted.
  bool Abort(const std::string& reason);
  std::string aborted() const;

 private:
  // Records `e` as the reason every rank stops, and rethrows it.
  [[noreturn]] void FailAll(int rank, const std::exception& e);
  template <typename Ready>
  void Wait(std::unique_lock<std::mutex>& lock, std::chrono::steady_clock::time_point deadline,
            int rank, const char* phase, Ready ready);

  const int size_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0, departed_ = 0;
  bool done_ = false;
  std::string aborted_;
};

// For an all-reduce's arrive step: the first rank fixes the count (*agreed), every other rank
// must send as many floats.
void AgreeOnCount(bool first, int rank, size_t count, size_t* agreed);

}  // namespace crossbow
