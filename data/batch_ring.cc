#include "data/batch_ring.h"

#include <algorithm>
#include <array>

#include "crossbow/core/enforce.h"

namespace crossbow::data {

BatchMemory AllocateBatchMemory(size_t bytes) { return AllocateHostForTransfer(bytes); }

BatchRing::BatchRing(int slots, int64_t floats_per_slot, int64_t labels_per_slot)
    : slots_(slots), expected_(slots) {
  CROSSBOW_ENFORCE_VALUE(slots > 0, "a batch ring needs at least one slot, got ", slots);
  for (Slot& slot : slots_) {
    memory_.push_back(AllocateBatchMemory(floats_per_slot * sizeof(float)));
    slot.images = reinterpret_cast<float*>(memory_.back().get());
    // labels, labels_b, lam: three rows of four-byte values.
    memory_.push_back(AllocateBatchMemory(3 * labels_per_slot * sizeof(int32_t)));
    slot.labels = reinterpret_cast<int32_t*>(memory_.back().get());
    slot.labels_b = slot.labels + labels_per_slot;
    slot.lam = reinterpret_cast<float*>(slot.labels_b + labels_per_slot);
  }
  Reset(0);
}

void BatchRing::Reset(int64_t first) {
  std::lock_guard<std::mutex> lock(mutex_);
  CROSSBOW_ENFORCE(std::none_of(slots_.begin(), slots_.end(),
                                [](const Slot& s) { return s.state == Slot::State::kAcquired; }),
                   "the batch ring cannot restart while a batch is held: release it first");
  first_ = next_acquire_ = first;
  for (size_t i = 0; i < slots_.size(); ++i) {
    slots_[i].state = Slot::State::kFree;
    slots_[i].sequence = -1;
    expected_[i] = first + static_cast<int64_t>(i);
  }
  stopped_ = false;
  failure_ = nullptr;
}

BatchRing::Slot* BatchRing::BeginFill(int64_t sequence) {
  std::unique_lock<std::mutex> lock(mutex_);
  const size_t index = (sequence - first_) % slots_.size();
  producers_.wait(lock, [&] {
    return stopped_ || (slots_[index].state == Slot::State::kFree && expected_[index] == sequence);
  });
  if (stopped_) return nullptr;
  Slot& slot = slots_[index];
  slot.state = Slot::State::kFilling;
  slot.sequence = sequence;
  slot.corrupt = 0;
  return &slot;
}

void BatchRing::EndFill(Slot* slot) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slot->state = Slot::State::kReady;
  }
  consumers_.notify_all();
}

BatchRing::Slot* BatchRing::Acquire() {
  std::unique_lock<std::mutex> lock(mutex_);
  const int64_t sequence = next_acquire_++;
  Slot& slot = SlotFor(sequence);
  consumers_.wait(lock, [&] {
    return stopped_ || (slot.state == Slot::State::kReady && slot.sequence == sequence);
  });
  if (failure_) std::rethrow_exception(failure_);
  CROSSBOW_ENFORCE(!stopped_, "the batch source was stopped while waiting for a batch");
  slot.state = Slot::State::kAcquired;
  return &slot;
}

void BatchRing::Release(const Batch* batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(slots_.begin(), slots_.end(),
                           [batch](const Slot& s) { return &s.batch == batch; });
    CROSSBOW_ENFORCE(it != slots_.end() && it->state == Slot::State::kAcquired,
                     "Release() of a batch that this source did not hand out or that was "
                     "already released");
    it->state = Slot::State::kFree;
    expected_[it - slots_.begin()] += static_cast<int64_t>(slots_.size());
  }
  producers_.notify_all();
}

void BatchRing::Stop(std::exception_ptr failure) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    if (failure && !failure_) failure_ = failure;
  }
  producers_.notify_all();
  consumers_.notify_all();
}

int64_t BatchRing::FirstUnreleased() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t first = next_acquire_;
  for (const Slot& slot : slots_) {
    if (slot.state == Slot::State::kAcquired) first = std::min(first, slot.sequence);
  }
  return first;
}

int64_t BatchRing::held() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::count_if(slots_.begin(), slots_.end(),
                       [](const Slot& s) { return s.state == Slot::State::kAcquired; });
}

std::string BatchRing::Describe() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::array<int, 4> count{};
  for (const Slot& slot : slots_) ++count[static_cast<int>(slot.state)];
  return detail::Concat("next batch ", next_acquire_, "; ", slots_.size(), " slots: ", count[0],
                        " free, ", count[1], " being filled, ", count[2], " ready, ", count[3],
                        " held", stopped_ ? "; stopped" : "");
}

}  // namespace crossbow::data
