#pragma once

#include <cstdint>
#include <string>

#include "crossbow/core/enforce.h"
#include "crossbow/core/tensor.h"

namespace crossbow {

// Mixup (Zhang et al. 2018) and CutMix (Yun et al. 2019) of training batches (data/mix.h): each
// batch draws lam ~ Beta(alpha, alpha) and mixes every example with another of the batch. An
// alpha of 0 is off; with both on, each batch takes one of the two with even odds (timm's Mixup
// with switch_prob 0.5).
struct MixOptions {
  double mixup_alpha = 0;
  double cutmix_alpha = 0;
  bool active() const { return mixup_alpha > 0 || cutmix_alpha > 0; }
};

// One batch in host memory, owned by its source until released.
struct Batch {
  const float* images = nullptr;    // size x C x H x W, plain NCHW
  const int32_t* labels = nullptr;  // size
  int64_t size = 0;
  int64_t epoch = 0;           // 0-based epoch the batch belongs to
  int64_t index_in_epoch = 0;  // 0-based batch number within its epoch
  bool last_in_epoch = false;
  // A mixed batch (MixOptions): example i is lam[i] of labels[i]'s and 1 - lam[i] of
  // labels_b[i]'s, and the loss weighs the two labels so. Both null: not mixed.
  const int32_t* labels_b = nullptr;  // size
  const float* lam = nullptr;         // size
};

// Which batches of a run one process reads when several processes (MPI ranks) share one data
// set. The run's batch sequence is cut into rows of world x block batches; rank r reads batches
// r*block .. r*block+block-1 of every row, so that the ranks together read every batch, and so
// every record, once per epoch. With block = the learners of a rank, rank r's learners get the
// batches that the same learners would get in one process holding every rank's devices.
struct BatchShard {
  int rank = 0, world = 1, block = 1;

  int64_t row() const { return static_cast<int64_t>(world) * block; }
  // The run's batch number of this rank's `local`-th batch.
  int64_t Global(int64_t local) const {
    return local / block * row() + static_cast<int64_t>(rank) * block + local % block;
  }
  // Where the ranks stand after this rank read `local` batches: the start of the next row.
  int64_t Position(int64_t local) const { return (local + block - 1) / block * row(); }
  // This rank's first batch at or after the run's batch `global` (rounded up to a row).
  int64_t LocalStart(int64_t global) const { return (global + row() - 1) / row() * block; }
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
  // The most batches its consumer holds at once (the engine: one per learner). A source with a
  // fixed pool of batch buffers grows the pool to fit, so that no learner count can exhaust it.
  // Only while no batch is held.
  virtual void ReserveHeld(int batches) {}
  // What the data are, in a line that ranks compare before training (an LMDB source: its
  // metadata, which it read instead of the records); empty: the record count alone.
  virtual std::string DataIdentity() const { return ""; }
  // What the source is doing or waiting for, in a few words, for a stall report.
  virtual std::string Describe() const { return ""; }

  // Position and random state, for checkpoints: restoring it makes the source continue with
  // the batch after the last one released before SaveState().
  virtual std::string SaveState() const = 0;
  virtual void RestoreState(const std::string& state) = 0;

  // From the current position on, mixes the batches it makes as `mix` says (a training source
  // only: evaluation never mixes). Only while no batch is held. Returns false, changing
  // nothing, where the source cannot mix.
  virtual bool SetMix(const MixOptions& mix) { return false; }

  // From the current position on, reads only `shard`'s batches (the engine calls it when it
  // trains across processes). Only while no batch is held. Sources that cannot be sharded say so.
  virtual void Shard(const BatchShard& shard) {
    throw Error("this batch source cannot be sharded across processes");
  }
};

}  // namespace crossbow
