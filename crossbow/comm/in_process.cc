#include "crossbow/comm/in_process.h"

#include <algorithm>

#include "crossbow/core/enforce.h"

namespace crossbow {

InProcessCollectives::InProcessCollectives(int size, std::shared_ptr<Collectives> outer,
                                           int outer_rank)
    : rendezvous_(size),
      outer_(std::move(outer)),
      outer_rank_(outer_rank),
      posted_(size, nullptr) {}

void InProcessCollectives::AllReduceSum(int rank, float* data, size_t count, ContextBase*,
                                        std::chrono::milliseconds timeout) {
  if (size() == 1 && !outer_) {
    CROSSBOW_ENFORCE_VALUE(rank == 0, "all-reduce: rank ", rank, " is outside the group of 1");
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  rendezvous_.Run(
      rank, timeout,
      [&](bool first) {
        AgreeOnCount(first, rank, count, &count_);
        posted_[rank] = data;
      },
      [&] {
        result_.assign(posted_[0], posted_[0] + count);
        for (int r = 1; r < size(); ++r) {
          for (size_t i = 0; i < count; ++i) result_[i] += posted_[r][i];
        }
      },
      [&] { std::copy(result_.begin(), result_.end(), data); },
      // The process's sum across processes, outside the group's lock so that Abort is not held
      // up; the other local ranks wait for the result meanwhile, so result_ is this thread's.
      [&] {
        if (!outer_) return;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        outer_->AllReduceSum(outer_rank_, result_.data(), result_.size(), nullptr,
                             std::max(left, std::chrono::milliseconds(0)));
      });
}

void InProcessCollectives::Abort(const std::string& reason) { rendezvous_.Abort(reason); }

}  // namespace crossbow
