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
      batch_size_(batch_size) {
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
  const int64_t n = std::min(batch_size_, EpochSize() - position_);
  Batch batch;
  batch.images = images_.data() + position_ * example_size_;
  batch.labels = labels_.data() + position_;
  batch.size = n;
  batch.epoch = epoch_;
  batch.index_in_epoch = index_++;
  position_ += n;
  batch.last_in_epoch = position_ == EpochSize();
  if (batch.last_in_epoch) {
    position_ = index_ = 0;
    ++epoch_;
  }
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
  return detail::Concat(epoch_, " ", position_, " ", index_);
}

void ArraySource::RestoreState(const std::string& state) {
  std::istringstream in(state);
  int64_t epoch = -1, position = -1, index = -1;
  in >> epoch >> position >> index;
  CROSSBOW_ENFORCE_VALUE(
      !in.fail() && epoch >= 0 && position >= 0 && position < EpochSize() && index >= 0,
      "array source: bad state '", state, "' for ", EpochSize(), " examples");
  std::lock_guard<std::mutex> lock(mutex_);
  epoch_ = epoch;
  position_ = position;
  index_ = index;
}

}  // namespace crossbow
