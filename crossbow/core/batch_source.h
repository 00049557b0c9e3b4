#pragma once

#include <cstdint>
#include <string>

#include "crossbow/core/tensor.h"

namespace crossbow {

// One batch in host memory, owned by its source until released.
struct Batch {
  const float* images = nullptr;    // size x C x H x W, plain NCHW
  const int32_t* labels = nullptr;  // size
  int64_t size = 0;
  int64_t epoch = 0;           // 0-based epoch the batch belongs to
  int64_t index_in_epoch = 0;  // 0-based batch number within its epoch
  bool last_in_epoch = false;
};

// Where the engine takes its batches from. Core defines it, data/ implements it (LMDB with
// OpenCV augmentation) and tests implement it in memory, so that engine binaries never link
// OpenCV. Sources are thread-safe: several learners acquire batches concurrently, each
// getting a distinct batch; every record appears exactly once per epoch over all of them.
class BatchSource {
 public:
  virtual ~BatchSource() = default;

  virtual Shape ExampleShape() const = 0;  // C, H, W of one example after transforms
  virtual int64_t EpochSize() const = 0;   // records per epoch
  // A batch may be smaller: the last of an epoch, or one from which corrupt records were dropped.
  virtual int64_t batch_size() const = 0;

  // Blocks until a batch is ready. The batch stays valid until Release().
  virtual const Batch* Acquire() = 0;
  virtual void Release(const Batch* batch) = 0;

  // Position and random state, for checkpoints: restoring it makes the source continue with
  // the batch after the last one released before SaveState().
  virtual std::string SaveState() const = 0;
  virtual void RestoreState(const std::string& state) = 0;
};

}  // namespace crossbow
