#include "data/epoch_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "crossbow/core/enforce.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

// Every record once per epoch, in contiguous blocks: each window of `window` blocks holds the
// records of that many whole blocks, shuffled together; batches mix blocks.
TEST(EpochOrder, BlockOrderVisitsEveryRecordOnceWithinWindowsOfWholeBlocks) {
  const int64_t records = 1000, block = 32, window = 4;  // the last block is short (8)
  for (int64_t epoch : {0, 1}) {
    const std::vector<int64_t> order = EpochOrder(records, 7, epoch, true, block, window);
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(records);
    for (int64_t i = 0; i < records; ++i) all[i] = i;
    ASSERT_EQ(sorted, all) << "every record once in epoch " << epoch;
    size_t at = 0, windows = 0;
    while (at < order.size()) {
      // A window: the records of `window` blocks (fewer at the end), each block whole.
      std::set<int64_t> blocks;
      size_t end = at, size = 0;
      while (end < order.size() &&
             (blocks.size() < static_cast<size_t>(window) || blocks.count(order[end] / block))) {
        blocks.insert(order[end] / block);
        ++end;
      }
      for (int64_t b : blocks) size += std::min(records, (b + 1) * block) - b * block;
      ASSERT_EQ(end - at, size) << "window " << windows << " holds whole blocks";
      // Mixed: its first 16 records come from more than one block.
      std::set<int64_t> first;
      for (size_t i = at; i < std::min(end, at + 16); ++i) first.insert(order[i] / block);
      if (blocks.size() > 1) EXPECT_GT(first.size(), 1u) << "window " << windows;
      at = end;
      ++windows;
    }
    EXPECT_EQ(windows, (records / block + 1 + window - 1) / window);
  }
  EXPECT_NE(EpochOrder(records, 7, 0, true, block, window),
            EpochOrder(records, 7, 1, true, block, window));
  EXPECT_EQ(EpochOrder(records, 7, 1, true, block, window),
            EpochOrder(records, 7, 1, true, block, window));
  EXPECT_EQ(EpochOrder(5, 7, 0, false, block, window), (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(EpochOrder, AutoPicksBlocksForALargeDbWithInterleavedLabels) {
  // 1000 records: 990 runs (shuffled, 100 classes), 10 runs (in label order), unknown.
  const int64_t shuffled = 990, sorted = 10, unknown = -1;
  EXPECT_FALSE(ChooseReadOrder("auto", 400, 1000, 1000, shuffled).block);
  EXPECT_TRUE(ChooseReadOrder("auto", 400, 1000, 1000, shuffled).note.empty());
  const ReadOrderChoice large = ChooseReadOrder("auto", 600, 1000, 1000, shuffled);
  EXPECT_TRUE(large.block);
  EXPECT_NE(large.note.find("larger than half of memory"), std::string::npos) << large.note;
  for (int64_t runs : {sorted, unknown}) {
    const ReadOrderChoice kept = ChooseReadOrder("auto", 600, 1000, 1000, runs);
    EXPECT_FALSE(kept.block) << runs;
    EXPECT_FALSE(kept.warn);
    EXPECT_NE(kept.note.find(runs < 0 ? "does not say" : "runs of 100 records"), std::string::npos)
        << kept.note;
  }
  const ReadOrderChoice asked = ChooseReadOrder("block", 1, 1000, 1000, sorted);
  EXPECT_TRUE(asked.block) << "block is block when asked for";
  EXPECT_TRUE(asked.warn);
  EXPECT_NE(asked.note.find("few classes"), std::string::npos) << asked.note;
  EXPECT_TRUE(ChooseReadOrder("block", 1, 1000, 1000, shuffled).note.empty());
  EXPECT_FALSE(ChooseReadOrder("random", 999999, 1000, 1000, shuffled).block);
  EXPECT_ERROR(ChooseReadOrder("blocks", 1, 1, 1, 1), ValueError,
               "read_order (--read-order) must be");
}

TEST(EpochOrder, LabelsAreInterleavedWhenRunsAreShort) {
  EXPECT_TRUE(LabelsInterleaved(1000, 500));  // two classes shuffled: runs of 2 on average
  EXPECT_TRUE(LabelsInterleaved(1000, 250));  // at the bound
  EXPECT_FALSE(LabelsInterleaved(1000, 249));
  EXPECT_FALSE(LabelsInterleaved(1000, 10));  // ten classes one after another
  EXPECT_FALSE(LabelsInterleaved(1000, -1));  // not recorded
}

TEST(EpochOrder, BlocksHoldAbout8MiB) {
  EXPECT_EQ(BlockRecords(uint64_t{110000} * 1000, 1000), (8 << 20) / 110000);
  EXPECT_EQ(BlockRecords(1000, 1000), 8 << 20);
  EXPECT_EQ(BlockRecords(uint64_t{1} << 40, 10), 16);
}

}  // namespace
}  // namespace crossbow::data
