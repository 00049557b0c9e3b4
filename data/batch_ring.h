#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "crossbow/core/batch_source.h"
#include "crossbow/core/device_backend.h"

namespace crossbow::data {

// Host memory for batch slots: page-locked when a GPU is present, so that a learner's
// host-to-device copy runs asynchronously on its stream.
using BatchMemory = std::shared_ptr<uint8_t>;
BatchMemory AllocateBatchMemory(size_t bytes);

// A fixed ring of reusable batch slots between producers and consumers. Batches carry
// sequence numbers 0, 1, 2, ... (counted from Reset's `first`): producers fill sequence s
// into slot s mod slots once batch s - slots is released, and consumers acquire batches in
// sequence order, each getting a distinct one.
class BatchRing {
 public:
  struct Slot {
    Batch batch;
    float* images = nullptr;
    int32_t* labels = nullptr;
    int32_t* labels_b = nullptr;  // a mixed batch's second labels and their weights (data/mix.h)
    float* lam = nullptr;
    int64_t sequence = -1;
    int64_t corrupt = 0;  // records of this batch that were skipped
    enum class State { kFree, kFilling, kReady, kAcquired } state = State::kFree;
  };

  BatchRing(int slots, int64_t floats_per_slot, int64_t labels_per_slot);

  // Empties the ring (no batch may be held) and numbers the next batch `first`.
  void Reset(int64_t first);
  // Producers: blocks until the slot for `sequence` is free; nullptr once stopped.
  Slot* BeginFill(int64_t sequence);
  void EndFill(Slot* slot);
  // Consumers: the next batch in sequence; rethrows a producer's failure.
  Slot* Acquire();
  void Release(const Batch* batch);
  // Wakes and turns away every waiter (until Reset); a failure is passed to consumers.
  void Stop(std::exception_ptr failure = nullptr);

  // The first batch not yet released: where a restored source starts again.
  int64_t FirstUnreleased() const;
  int64_t held() const;  // batches acquired and not released
  int slots() const { return static_cast<int>(slots_.size()); }
  // The ring's state in a few words: which batch consumers wait for, what the slots hold.
  std::string Describe() const;

 private:
  Slot& SlotFor(int64_t sequence) { return slots_[(sequence - first_) % slots_.size()]; }

  std::vector<BatchMemory> memory_;
  std::vector<Slot> slots_;
  std::vector<int64_t> expected_;  // per slot: the sequence it takes next
  int64_t first_ = 0, next_acquire_ = 0;
  bool stopped_ = false;
  std::exception_ptr failure_;
  mutable std::mutex mutex_;
  std::condition_variable producers_, consumers_;
};

}  // namespace crossbow::data
