#include "crossbow/comm/in_process.h"

#include <algorithm>

#include "crossbow/core/enforce.h"

namespace crossbow {

InProcessCollectives::InProcessCollectives(int size, std::shared_ptr<Collectives> outer,
                                           int outer_rank)
    : size_(size), outer_(std::move(outer)), outer_rank_(outer_rank), posted_(size, nullptr) {
  CROSSBOW_ENFORCE_VALUE(size > 0, "a collectives group needs at least one rank, got ", size);
}

template <typename Ready>
void InProcessCollectives::Wait(std::unique_lock<std::mutex>& lock,
                                std::chrono::steady_clock::time_point deadline, int rank,
                                const char* phase, Ready ready) {
  const bool ok = cv_.wait_until(lock, deadline, [&] { return !aborted_.empty() || ready(); });
  CROSSBOW_ENFORCE(aborted_.empty(), "all-reduce on rank ", rank, " aborted: ", aborted_);
  if (ok) return;
  aborted_ = detail::Concat("rank ", rank, " timed out ", phase, " (", arrived_, " of ", size_,
                            " ranks had arrived)");
  cv_.notify_all();
  CROSSBOW_FAIL("all-reduce: ", aborted_);
}

// The other local ranks wait for `summed_` meanwhile, so result_ is this thread's alone.
void InProcessCollectives::ReduceOuter(std::unique_lock<std::mutex>& lock,
                                       std::chrono::steady_clock::time_point deadline) {
  lock.unlock();
  try {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    outer_->AllReduceSum(outer_rank_, result_.data(), result_.size(),
                         std::max(left, std::chrono::milliseconds(0)));
  } catch (const std::exception& e) {
    lock.lock();
    if (aborted_.empty()) aborted_ = e.what();
    cv_.notify_all();
    throw;
  }
  lock.lock();
}

void InProcessCollectives::AllReduceSum(int rank, float* data, size_t count,
                                        std::chrono::milliseconds timeout) {
  CROSSBOW_ENFORCE_VALUE(rank >= 0 && rank < size_, "all-reduce: rank ", rank,
                         " is outside the group of ", size_);
  if (size_ == 1 && !outer_) return;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mutex_);
  // The previous collective is over once every rank has copied its result out.
  Wait(lock, deadline, rank, "waiting for the previous all-reduce to finish",
       [&] { return departed_ == 0; });
  if (arrived_ == 0) count_ = count;
  CROSSBOW_ENFORCE_VALUE(count == count_, "all-reduce: rank ", rank, " sends ", count,
                         " floats, another rank sent ", count_);
  posted_[rank] = data;
  if (++arrived_ == size_) {
    result_.assign(posted_[0], posted_[0] + count);
    for (int r = 1; r < size_; ++r) {
      for (size_t i = 0; i < count; ++i) result_[i] += posted_[r][i];
    }
    if (outer_) ReduceOuter(lock, deadline);
    summed_ = true;
    cv_.notify_all();
  }
  Wait(lock, deadline, rank, "waiting for the other ranks", [&] { return summed_; });
  std::copy(result_.begin(), result_.end(), data);
  if (++departed_ == size_) {
    arrived_ = departed_ = 0;
    summed_ = false;
    std::fill(posted_.begin(), posted_.end(), nullptr);
    cv_.notify_all();
  }
}

void InProcessCollectives::Abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (aborted_.empty()) aborted_ = reason;
  cv_.notify_all();
}

}  // namespace crossbow
