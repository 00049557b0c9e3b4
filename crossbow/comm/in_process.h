#pragma once

#include <memory>
#include <vector>

#include "crossbow/comm/collectives.h"
#include "crossbow/comm/rendezvous.h"

namespace crossbow {

// Collectives between threads of one process, one thread per rank, over host memory (the
// context is nullptr): each rank posts its buffer, the last to arrive sums them in rank order into
// a shared result, and every rank copies the result back before the next collective may start.
// A group of one rank without `outer` touches nothing, so it also serves one GPU alone.
//
// With `outer` (the process group of an MPI job) this is the hierarchy's lower level: the last
// to arrive also all-reduces the process's sum over `outer` (as `outer_rank`) before the ranks
// copy it out, so that one cross-process collective per call serves every local rank. Abort
// does not reach `outer`, which outlives this group.
class InProcessCollectives final : public Collectives {
 public:
  explicit InProcessCollectives(int size, std::shared_ptr<Collectives> outer = nullptr,
                                int outer_rank = 0);

  int size() const override { return rendezvous_.size(); }
  void AllReduceSum(int rank, float* data, size_t count, ContextBase* context,
                    std::chrono::milliseconds timeout) override;
  void Abort(const std::string& reason) override;

 private:
  Rendezvous rendezvous_;
  const std::shared_ptr<Collectives> outer_;
  const int outer_rank_;
  std::vector<const float*> posted_;  // per rank, in the current collective
  std::vector<float> result_;
  size_t count_ = 0;
};

}  // namespace crossbow
