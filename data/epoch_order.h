#pragma once

#include <cstdint>
#include <vector>

namespace crossbow::data {

// The order in which an epoch visits the records 0..records-1: a permutation seeded by
// (seed, epoch) when shuffling, else 0, 1, 2, ... The same on every platform.
std::vector<int64_t> EpochOrder(int64_t records, uint64_t seed, int64_t epoch, bool shuffle);

}  // namespace crossbow::data
