#include "data/epoch_order.h"

#include <numeric>
#include <utility>

#include "data/rng.h"

namespace crossbow::data {

std::vector<int64_t> EpochOrder(int64_t records, uint64_t seed, int64_t epoch, bool shuffle) {
  std::vector<int64_t> order(records);
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle) return order;
  // The third number keeps this stream apart from the per-record augmentation seeds.
  Rng rng(MixSeed(seed, static_cast<uint64_t>(epoch), 0x6F72646572ULL));
  for (int64_t i = records - 1; i > 0; --i) std::swap(order[i], order[rng.UniformInt(i + 1)]);
  return order;
}

}  // namespace crossbow::data
