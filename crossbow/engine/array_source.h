#pragma once

#include <list>
#include <mutex>
#include <vector>

#include "crossbow/core/batch_source.h"

namespace crossbow {

// A BatchSource over examples held in memory, served in their order, epoch after epoch; the
// last batch of an epoch holds what is left. For tests, and for training on numpy arrays.
class ArraySource final : public BatchSource {
 public:
  // images: n examples of `example_shape` (C, H, W), plain; labels: n.
  ArraySource(std::vector<float> images, std::vector<int32_t> labels, Shape example_shape,
              int64_t batch_size);

  Shape ExampleShape() const override { return example_shape_; }
  int64_t EpochSize() const override { return static_cast<int64_t>(labels_.size()); }
  int64_t batch_size() const override { return batch_size_; }
  const Batch* Acquire() override;
  void Release(const Batch* batch) override;
  std::string SaveState() const override;  // "epoch position index" of the run's next batch
  void RestoreState(const std::string& state) override;
  void Shard(const BatchShard& shard) override;

 private:
  std::vector<float> images_;
  std::vector<int32_t> labels_;
  Shape example_shape_;
  int64_t example_size_, batch_size_;
  int64_t batches_per_epoch_;
  mutable std::mutex mutex_;
  BatchShard shard_;
  int64_t next_ = 0;      // this rank's batches handed out
  std::list<Batch> out_;  // acquired and not yet released
};

}  // namespace crossbow
