#include "crossbow/engine/array_source.h"

#include <algorithm>
#include <sstream>

namespace crossbow {

ArraySource::ArraySource(std::vector<float> images, std::vector<int32_t> labels,
                         Shape example_shape, int64_t batch_size)
    : images_(std::move(images)),
      labels_(std::move(labels)),
      example_shape_(std::move(example_shape)),
      example_size_(NumElements(example_shape_)),
      batch_size_(batch_size),
      batches_per_epoch_(batch_size > 0
                             ? (static_cast<int64_t>(labels_.size()) + batch_size - 1) / batch_size
                             : 0) {
  CROSSBOW_ENFORCE_VALUE(batch_size_ > 0, "batch size must be > 0, got ", batch_size_);
  CROSSBOW_ENFORCE_VALUE(!labels_.empty(), "an array source needs at least one example");
  CROSSBOW_ENFORCE_VALUE(
      example_shape_.size() == 3 && images_.size() == labels_.size() * example_size_,
      "array source: ", labels_.size(), " labels need ", labels_.size(),
      " images of shape [C, H, W]", " (", labels_.size() * example_size_, " floats), got ",
      images_.size(), " floats of shape ", ShapeString(example_shape_));
}

const Batch* ArraySource::Acquire() {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t global = shard_.Global(next_++);
  Batch batch;
  batch.epoch = global / batches_per_epoch_;
  batch.index_in_epoch = global % batches_per_epoch_;
  const int64_t position = batch.index_in_epoch * batch_size_;
  batch.images = images_.data() + position * example_size_;
  batch.labels = labels_.data() + position;
  batch.size = std::min(batch_size_, EpochSize() - position);
  batch.last_in_epoch = batch.index_in_epoch == batches_per_epoch_ - 1;
  out_.push_back(batch);
  return &out_.back();
}

void ArraySource::Release(const Batch* batch) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(out_.begin(), out_.end(), [&](const Batch& b) { return &b == batch; });
  CROSSBOW_ENFORCE(it != out_.end(), "array source: Release of a batch it did not hand out");
  out_.erase(it);
}

std::string ArraySource::SaveState() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const int64_t global = shard_.Position(next_);
  const int64_t epoch = global / batches_per_epoch_, index = global % batches_per_epoch_;
  return detail::Concat(epoch, " ", index * batch_size_, " ", index);
}

void ArraySource::RestoreState(const std::string& state) {
  std::istringstream in(state);
  int64_t epoch = -1, position = -1, index = -1;
  in >> epoch >> position >> index;
  CROSSBOW_ENFORCE_VALUE(!in.fail() && epoch >= 0 && index >= 0 && index < batches_per_epoch_ &&
                             position == index * batch_size_,
                         "array source: bad state '", state, "' for ", EpochSize(),
                         " examples in batches of ", batch_size_);
  std::lock_guard<std::mutex> lock(mutex_);
  next_ = shard_.LocalStart(epoch * batches_per_epoch_ + index);
}

void ArraySource::Shard(const BatchShard& shard) {
  CROSSBOW_ENFORCE_VALUE(
      shard.world >= 1 && shard.rank >= 0 && shard.rank < shard.world && shard.block >= 1,
      "array source: bad shard (rank ", shard.rank, " of ", shard.world, ", block ", shard.block,
      ")");
  std::lock_guard<std::mutex> lock(mutex_);
  CROSSBOW_ENFORCE(out_.empty(), "array source: Shard() while ", out_.size(),
                   " batch(es) are held");
  const int64_t global = shard_.Position(next_);
  shard_ = shard;
  next_ = shard_.LocalStart(global);
}

}  // namespace crossbow
