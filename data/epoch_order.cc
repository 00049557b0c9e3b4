#include "data/epoch_order.h"

#include <unistd.h>

#include <algorithm>
#include <numeric>
#include <utility>

#include "crossbow/core/enforce.h"
#include "data/rng.h"

namespace crossbow::data {
namespace {

template <typename It>
void Shuffle(It begin, It end, Rng* rng) {
  for (int64_t i = (end - begin) - 1; i > 0; --i) {
    std::swap(begin[i], begin[rng->UniformInt(i + 1)]);
  }
}

}  // namespace

std::vector<int64_t> EpochOrder(int64_t records, uint64_t seed, int64_t epoch, bool shuffle,
                                int64_t block, int64_t window) {
  std::vector<int64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle) return order;
  // The third number keeps this stream apart from the per-record augmentation seeds.
  Rng rng(MixSeed(seed, static_cast<uint64_t>(epoch), 0x6F72646572ULL));
  if (block <= 0) {
    Shuffle(order.begin(), order.end(), &rng);
    return order;
  }
  CROSSBOW_ENFORCE_VALUE(window >= 1, "a block order's window must be at least 1 block, got ",
                         window);
  std::vector<int64_t> blocks((records + block - 1) / block);
  std::iota(blocks.begin(), blocks.end(), 0);
  Shuffle(blocks.begin(), blocks.end(), &rng);
  order.clear();
  for (size_t first = 0; first < blocks.size(); first += window) {
    const size_t begin = order.size();
    for (size_t b = first; b < std::min(blocks.size(), first + window); ++b) {
      for (int64_t r = blocks[b] * block; r < std::min(records, (blocks[b] + 1) * block); ++r) {
        order.push_back(r);
      }
    }
    Shuffle(order.begin() + begin, order.end(), &rng);
  }
  return order;
}

bool LabelsInterleaved(int64_t records, int64_t label_runs) {
  return label_runs > 0 && records <= 4 * label_runs;
}

std::string DescribeLabelOrder(int64_t records, int64_t label_runs) {
  if (label_runs < 0) return "its metadata does not say how its labels are ordered";
  if (LabelsInterleaved(records, label_runs)) return "labels interleaved";
  return "labels in label order (runs of " +
         std::to_string(records / std::max<int64_t>(label_runs, 1)) + " records)";
}

ReadOrderChoice ChooseReadOrder(const std::string& read_order, uint64_t db_bytes,
                                uint64_t ram_bytes, int64_t records, int64_t label_runs) {
  const auto& names = ReadOrderNames();
  CROSSBOW_ENFORCE_VALUE(std::find(names.begin(), names.end(), read_order) != names.end(),
                         "read_order (--read-order) must be auto, random or block, got '",
                         read_order, "'");
  const bool interleaved = LabelsInterleaved(records, label_runs);
  if (read_order == "random") return {};
  const std::string order = DescribeLabelOrder(records, label_runs) +
                            (label_runs < 0 ? " (crossbow db check --write-metadata records it)"
                                            : " (convert with --shuffle)");
  if (read_order == "block") {
    if (interleaved) return {true};
    return {true, "block order on this DB, " + order + ": each batch holds few classes", true};
  }
  if (db_bytes <= ram_bytes / 2) return {};
  const std::string size = std::to_string(db_bytes) + " bytes, larger than half of memory";
  if (interleaved) return {true, size};
  return {false, size + ", but " + order + ": read in random order"};
}

uint64_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * size : 0;
}

int64_t BlockRecords(uint64_t db_bytes, int64_t records) {
  const double per_record = records > 0 ? static_cast<double>(db_bytes) / records : 1.0;
  return std::max<int64_t>(16, static_cast<int64_t>((8 << 20) / std::max(per_record, 1.0)));
}

}  // namespace crossbow::data
