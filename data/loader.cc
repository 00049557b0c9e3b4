#include "data/loader.h"

#include <glog/logging.h>

#include <algorithm>
#include <sstream>

#include "data/epoch_order.h"
#include "data/label_range.h"
#include "data/mix.h"
#include "data/rng.h"

namespace crossbow::data {
namespace {

constexpr char kStateTag[] = "crossbow.ImageLoader.v1";

// The first of the leading records that parses: it fixes the example shape.
Datum ReadProbe(const LmdbReader& reader) {
  LmdbReader::Transaction transaction(reader);
  std::string first_error;
  for (int64_t i = 0; i < std::min<int64_t>(reader.size(), 16); ++i) {
    const std::string_view bytes = transaction.Get(i);
    Datum datum;
    std::string error;
    if (ParseDatum(bytes.data(), bytes.size(), &datum, &error) &&
        (datum.encoded || CheckRawDatum(datum, &error))) {
      return datum;
    }
    if (first_error.empty()) first_error = "key " + transaction.last_key() + ": " + error;
  }
  CROSSBOW_FAIL(reader.path(), ": none of the first records is a readable Datum (", first_error,
                ")");
}

}  // namespace

ImageLoader::ImageLoader(LoaderOptions options) : options_(std::move(options)) {
  const LoaderOptions& o = options_;
  CROSSBOW_ENFORCE_VALUE(o.batch_size > 0, "batch_size must be positive, got ", o.batch_size);
  CROSSBOW_ENFORCE_VALUE(o.workers > 0, "workers must be positive, got ", o.workers);
  CROSSBOW_ENFORCE_VALUE(o.slots >= 0, "slots must not be negative, got ", o.slots);
  CROSSBOW_ENFORCE_VALUE(o.num_classes >= 0, "num_classes must not be negative, got ",
                         o.num_classes);
  CheckMix(o.mix);
  reader_ = std::make_unique<LmdbReader>(o.path);
  const int64_t records = reader_->size();
  CROSSBOW_ENFORCE(records > 0, o.path, " is an empty LMDB: there are no records to load");
  if (o.num_classes > 0) CheckLabels(*reader_, o.num_classes);
  if (o.shuffle) {
    const std::optional<DbMeta>& meta = reader_->meta();
    const uint64_t db_bytes = reader_->file_bytes();
    const ReadOrderChoice order = ChooseReadOrder(o.read_order, db_bytes, PhysicalMemory(), records,
                                                  meta ? meta->label_runs : -1);
    std::string note = order.note;
    if (order.block) {
      block_ = o.block_records > 0 ? o.block_records : BlockRecords(db_bytes, records);
      if (!note.empty()) {
        note += ": read in blocks of " + std::to_string(block_) + " records, " +
                std::to_string(o.window_blocks) +
                " blocks mixed (--read-order random for a uniform order)";
      }
    }
    LOG_IF(WARNING, !reader_->AdviseRandomReads(!order.block))
        << o.path << ": the kernel refused the read-ahead advice (madvise): reads work, a DB "
        << "larger than memory may read more than it uses";
    LOG_IF(WARNING, order.warn) << o.path << ": " << note;
    LOG_IF(INFO, !order.warn && !note.empty()) << o.path << ": " << note;
  }
  transformer_ = std::make_unique<Transformer>(o.transform, ReadProbe(*reader_));
  batches_per_epoch_ =
      o.drop_last ? records / o.batch_size : (records + o.batch_size - 1) / o.batch_size;
  CROSSBOW_ENFORCE_VALUE(batches_per_epoch_ > 0, "drop_last with batch_size ", o.batch_size,
                         " leaves no batch of the ", records, " records in ", o.path);
  ring_ = std::make_unique<BatchRing>(RingSlots(1), o.batch_size * transformer_->output_size(),
                                      o.batch_size);
  Start(0);
}

int ImageLoader::RingSlots(int held) const {
  const int workers = options_.workers;
  return std::max(options_.slots > 0 ? options_.slots : 2 * workers + 2, held + 2 * workers);
}

void ImageLoader::ReserveHeld(int batches) {
  CROSSBOW_ENFORCE_VALUE(batches >= 1, "ReserveHeld needs at least one batch, got ", batches);
  const int slots = RingSlots(batches);
  if (slots <= ring_->slots()) return;
  CROSSBOW_ENFORCE(ring_->held() == 0, "ReserveHeld() while ", ring_->held(),
                   " batch(es) are held: release them first");
  const int64_t first = ring_->FirstUnreleased();
  Stop();
  ring_ = std::make_unique<BatchRing>(slots, options_.batch_size * transformer_->output_size(),
                                      options_.batch_size);
  Start(first);
}

std::string ImageLoader::DataIdentity() const {
  const auto& meta = reader_->meta();
  return meta ? MetaSummary(*meta) : std::to_string(reader_->size()) + " records, no metadata";
}

std::string ImageLoader::Describe() const {
  return detail::Concat(options_.path, ": ", options_.workers, " worker(s); ", ring_->Describe());
}

ImageLoader::~ImageLoader() { Stop(); }

void ImageLoader::CheckMix(const MixOptions& mix) const {
  CheckMixOptions(mix);
  CROSSBOW_ENFORCE_VALUE(!mix.active() || options_.transform.train, options_.path,
                         ": Mixup and CutMix (--mixup-alpha, --cutmix-alpha) mix training ",
                         "batches; this loader is an evaluation's (train false)");
}

bool ImageLoader::SetMix(const MixOptions& mix) {
  CheckMix(mix);
  CROSSBOW_ENFORCE(ring_->held() == 0, "SetMix() while ", ring_->held(),
                   " batch(es) are held: release them first");
  const int64_t first = ring_->FirstUnreleased();
  Stop();
  options_.mix = mix;
  Start(first);
  return true;
}

void ImageLoader::Start(int64_t first_sequence) {
  ring_->Reset(first_sequence);
  for (int w = 0; w < options_.workers; ++w) {
    workers_.emplace_back(&ImageLoader::Work, this, w, first_sequence);
  }
}

void ImageLoader::Stop() {
  ring_->Stop();
  for (std::thread& worker : workers_) worker.join();
  workers_.clear();
}

void ImageLoader::Work(int worker, int64_t first_sequence) {
  try {
    LmdbReader::Transaction transaction(*reader_);
    int64_t epoch = -1;
    std::vector<int64_t> order;
    for (int64_t sequence = first_sequence + worker;; sequence += options_.workers) {
      BatchRing::Slot* slot = ring_->BeginFill(sequence);
      if (slot == nullptr) return;
      const int64_t global = shard_.Global(sequence);
      if (global / batches_per_epoch_ != epoch) {
        epoch = global / batches_per_epoch_;
        order = EpochOrder(reader_->size(), options_.seed, epoch, options_.shuffle, block_,
                           options_.window_blocks);
        transaction.Renew();
      }
      Fill(global, order, &transaction, slot);
      ring_->EndFill(slot);
    }
  } catch (...) {
    ring_->Stop(std::current_exception());
  }
}

void ImageLoader::Fill(int64_t global, const std::vector<int64_t>& order,
                       LmdbReader::Transaction* transaction, BatchRing::Slot* slot) const {
  const int64_t epoch = global / batches_per_epoch_, index = global % batches_per_epoch_;
  const int64_t begin = index * options_.batch_size;
  const int64_t end = std::min(begin + options_.batch_size, reader_->size());
  const int64_t example = transformer_->output_size();
  int64_t size = 0;
  for (int64_t position = begin; position < end; ++position) {
    const int64_t record = order[position];
    const std::string_view bytes = transaction->Get(record);
    const std::string why =
        Decode(bytes, MixSeed(options_.seed, epoch, record), transaction->last_key(),
               slot->images + size * example, slot->labels + size);
    if (why.empty()) {
      ++size;
      continue;
    }
    ++slot->corrupt;
    LOG(WARNING) << options_.path << ": record " << transaction->last_key()
                 << " is corrupt, skipped: " << why;
  }
  slot->batch =
      Batch{slot->images, slot->labels, size, epoch, index, index == batches_per_epoch_ - 1};
  if (!options_.mix.active() || size == 0) return;
  const Shape& shape = transformer_->output_shape();
  ApplyMix(DrawMix(options_.mix, options_.seed, epoch, index, size, shape[1], shape[2]), shape,
           size, slot->images, slot->labels, slot->labels_b, slot->lam);
  slot->batch.labels_b = slot->labels_b;
  slot->batch.lam = slot->lam;
}

std::string ImageLoader::Decode(std::string_view bytes, uint64_t seed, const std::string& key,
                                float* out, int32_t* label) const {
  Datum datum;
  std::string error;
  if (!ParseDatum(bytes.data(), bytes.size(), &datum, &error)) return "not a Datum: " + error;
  const int num_classes = options_.num_classes;
  CROSSBOW_ENFORCE_VALUE(num_classes == 0 || (datum.label >= 0 && datum.label < num_classes),
                         LabelError(options_.path, key, datum.label, num_classes));
  if (!transformer_->Apply(datum, seed, out, &error)) return error;
  *label = datum.label;
  return {};
}

const Batch* ImageLoader::Acquire() {
  for (;;) {
    BatchRing::Slot* slot = ring_->Acquire();
    const Batch& batch = slot->batch;
    {
      std::lock_guard<std::mutex> lock(stats_mutex_);
      int64_t& corrupt = corrupt_[batch.epoch];
      corrupt += slot->corrupt;
      if (batch.last_in_epoch) {
        LOG_IF(WARNING, corrupt > 0) << options_.path << ": epoch " << batch.epoch << " read, "
                                     << corrupt << " corrupt record(s) skipped";
        VLOG_IF(1, corrupt == 0) << options_.path << ": epoch " << batch.epoch << " read";
      }
    }
    // A batch of nothing but corrupt records is dropped, unless it marks the epoch's end.
    if (batch.size > 0 || batch.last_in_epoch) return &batch;
    ring_->Release(&batch);
  }
}

void ImageLoader::Release(const Batch* batch) { ring_->Release(batch); }

int64_t ImageLoader::corrupt_records(int64_t epoch) const {
  std::lock_guard<std::mutex> lock(stats_mutex_);
  auto it = corrupt_.find(epoch);
  return it == corrupt_.end() ? 0 : it->second;
}

std::string ImageLoader::SaveState() const {
  const int64_t sequence = shard_.Position(ring_->FirstUnreleased());
  std::ostringstream out;
  out << kStateTag << " seed " << options_.seed << " epoch " << sequence / batches_per_epoch_
      << " batch " << sequence % batches_per_epoch_ << " records " << reader_->size()
      << " batch_size " << options_.batch_size;
  return out.str();
}

void ImageLoader::RestoreState(const std::string& state) {
  std::istringstream in(state);
  std::string tag, seed_word, epoch_word, batch_word, records_word, size_word;
  uint64_t seed = 0;
  int64_t epoch = 0, batch = 0, records = 0, batch_size = 0;
  in >> tag >> seed_word >> seed >> epoch_word >> epoch >> batch_word >> batch >> records_word >>
      records >> size_word >> batch_size;
  CROSSBOW_ENFORCE_VALUE(
      !in.fail() && tag == kStateTag && epoch >= 0 && batch >= 0 && batch < batches_per_epoch_,
      "not an ImageLoader state (from SaveState()): '", state, "'");
  CROSSBOW_ENFORCE_VALUE(records == reader_->size() && batch_size == options_.batch_size,
                         "the state was saved for ", records, " records at batch size ", batch_size,
                         "; ", options_.path, " has ", reader_->size(), " records at batch size ",
                         options_.batch_size);
  CROSSBOW_ENFORCE(ring_->held() == 0, "RestoreState() while ", ring_->held(),
                   " batch(es) are held: release them first");
  Stop();
  options_.seed = seed;
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    corrupt_.erase(corrupt_.lower_bound(epoch), corrupt_.end());
  }
  Start(shard_.LocalStart(epoch * batches_per_epoch_ + batch));
}

void ImageLoader::Shard(const BatchShard& shard) {
  CROSSBOW_ENFORCE_VALUE(
      shard.world >= 1 && shard.rank >= 0 && shard.rank < shard.world && shard.block >= 1,
      options_.path, ": bad shard (rank ", shard.rank, " of ", shard.world, ", block ", shard.block,
      ")");
  CROSSBOW_ENFORCE(ring_->held() == 0, "Shard() while ", ring_->held(),
                   " batch(es) are held: release them first");
  const int64_t global = shard_.Position(ring_->FirstUnreleased());
  Stop();
  shard_ = shard;
  Start(shard_.LocalStart(global));
}

}  // namespace crossbow::data
