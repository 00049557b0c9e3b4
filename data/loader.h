#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "crossbow/core/batch_source.h"
#include "data/batch_ring.h"
#include "data/lmdb_io.h"
#include "data/transforms.h"

namespace crossbow::data {

struct LoaderOptions {
  std::string path;  // an LMDB of Caffe Datum records
  int64_t batch_size = 0;
  TransformConfig transform;  // transform.train turns augmentation on
  bool shuffle = true;        // a new permutation every epoch, seeded by (seed, epoch)
  uint64_t seed = 0;
  int workers = 1;      // threads that read, decode and augment
  int slots = 0;        // batches in the ring at least; 0: 2 * workers + 2 (grown by ReserveHeld)
  int num_classes = 0;  // a label outside [0, num_classes) stops the run; 0: unchecked
  bool drop_last = false;
  // When shuffling: "random", "block" or "auto" (data/epoch_order.h); a block order's blocks
  // hold `block_records` records (0: about 8 MiB of the DB) and `window_blocks` are mixed.
  std::string read_order = "auto";
  int64_t block_records = 0;
  int64_t window_blocks = 16;
  // Mixup and CutMix of training batches (data/mix.h); a test transform refuses them.
  MixOptions mix;
};

// Batches from an LMDB, decoded and augmented on a pool of workers into a ring of reusable slots
// (docs/design/data.md, "Loader"). Worker w builds batches w, w + workers, ... of the run, each
// through its own read transaction (its shard of the cursor work: LMDB reads are zero-copy lookups
// into the map, so reading where the pixels are decoded saves a hand-off). Batch contents depend
// only on the seed: the record order of an epoch comes from (seed, epoch) and each record's
// augmentation from (seed, epoch, record), and, with mix options, each batch's Mixup or CutMix
// from (seed, epoch, batch).
//
// Corrupt records (unparseable bytes, an image that does not decode, sizes that disagree with
// the bytes) are logged with their key, skipped and counted; a batch that held some is smaller.
// The count of each epoch is logged when its last batch is acquired. A label outside
// [0, num_classes) stops the run, naming the record: up front from the DB's metadata where it
// has some, else when the record is read (Acquire throws). Opening reads no record but the
// first that parses, whatever the DB's size.
class ImageLoader : public BatchSource {
 public:
  explicit ImageLoader(LoaderOptions options);
  ~ImageLoader() override;

  Shape ExampleShape() const override { return transformer_->output_shape(); }
  int64_t EpochSize() const override { return reader_->size(); }
  int64_t batch_size() const override { return options_.batch_size; }
  const Batch* Acquire() override;
  void Release(const Batch* batch) override;
  std::string SaveState() const override;
  void RestoreState(const std::string& state) override;
  void Shard(const BatchShard& shard) override;
  bool SetMix(const MixOptions& mix) override;
  void ReserveHeld(int batches) override;
  std::string Describe() const override;

  int64_t batches_per_epoch() const { return batches_per_epoch_; }
  // Records per block of the read order; 0 where it is uniformly random.
  int64_t block_records() const { return block_; }
  // The DB's metadata in a line (MetaSummary), or its record count where it has none.
  std::string DataIdentity() const override;
  // Corrupt records skipped in `epoch`, over the batches acquired so far.
  int64_t corrupt_records(int64_t epoch) const;
  const LoaderOptions& options() const { return options_; }

 private:
  // Sequences count this rank's batches (BatchShard::Global maps them to the run's).
  void Start(int64_t first_sequence);
  // Ring slots for a consumer that holds `held` batches: those, plus two per worker to fill.
  int RingSlots(int held) const;
  void Stop();
  void CheckMix(const MixOptions& mix) const;
  void Work(int worker, int64_t first_sequence);
  void Fill(int64_t global, const std::vector<int64_t>& order, LmdbReader::Transaction* transaction,
            BatchRing::Slot* slot) const;
  // Why the record is corrupt, or empty when it went into `out` and `label`.
  // Throws naming the record's key when its label is outside [0, num_classes).
  std::string Decode(std::string_view bytes, uint64_t seed, const std::string& key, float* out,
                     int32_t* label) const;

  LoaderOptions options_;
  std::unique_ptr<LmdbReader> reader_;
  std::unique_ptr<Transformer> transformer_;
  std::unique_ptr<BatchRing> ring_;
  int64_t batches_per_epoch_ = 0;
  int64_t block_ = 0;  // records per block of a block order; 0: uniformly random
  BatchShard shard_;   // changed only while the workers are stopped
  std::vector<std::thread> workers_;
  mutable std::mutex stats_mutex_;
  std::map<int64_t, int64_t> corrupt_;  // epoch -> records skipped
};

}  // namespace crossbow::data
