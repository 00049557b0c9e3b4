#include "data/loader.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include "data_test_util.h"

namespace crossbow::data {
namespace {

using testing::RawDatum;
using testing::TempDir;
using testing::WriteDb;

// Record i is a 1x2x2 image whose every pixel is i, labelled i % 10.
std::vector<std::string> Records(int n) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) {
    values.push_back(SerializeDatum(RawDatum(
        1, 2, 2, [i](int, int, int) { return i; }, i % 10)));
  }
  return values;
}

LoaderOptions Options(const std::string& path, int64_t batch_size, int workers = 1) {
  LoaderOptions options;
  options.path = path;
  options.batch_size = batch_size;
  options.workers = workers;
  options.transform.scale = 1;
  options.seed = 42;
  return options;
}

// The records (by pixel value) of the batches that `consumers` threads acquire, as many as
// make up `epochs` epochs, keyed by (epoch, index in epoch).
std::map<std::pair<int64_t, int64_t>, std::vector<int>> Drain(ImageLoader* loader, int consumers,
                                                              int epochs) {
  std::map<std::pair<int64_t, int64_t>, std::vector<int>> batches;
  std::mutex mutex;
  std::atomic<int64_t> remaining(loader->batches_per_epoch() * epochs);
  std::vector<std::thread> threads;
  for (int t = 0; t < consumers; ++t) {
    threads.emplace_back([&] {
      while (remaining.fetch_sub(1) > 0) {
        const Batch* batch = loader->Acquire();
        std::vector<int> records;
        for (int64_t i = 0; i < batch->size; ++i) {
          records.push_back(static_cast<int>(batch->images[i * 4]));
          EXPECT_EQ(batch->labels[i], records.back() % 10);
        }
        {
          std::lock_guard<std::mutex> lock(mutex);
          batches[{batch->epoch, batch->index_in_epoch}] = records;
        }
        loader->Release(batch);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return batches;
}

void ExpectEveryRecordOncePerEpoch(int consumers) {
  TempDir dir;
  WriteDb(dir / "db", Records(23));
  ImageLoader loader(Options(dir / "db", 4, 3));
  EXPECT_EQ(loader.batches_per_epoch(), 6);
  EXPECT_EQ(loader.ExampleShape(), (Shape{1, 2, 2}));
  auto batches = Drain(&loader, consumers, 2);
  ASSERT_EQ(batches.size(), 12u);
  std::vector<int> order[2];
  for (const auto& [key, records] : batches) {
    EXPECT_EQ(records.size(), key.second == 5 ? 3u : 4u);
    order[key.first].insert(order[key.first].end(), records.begin(), records.end());
  }
  for (std::vector<int>& epoch : order) {
    std::vector<int> sorted = epoch;
    std::sort(sorted.begin(), sorted.end());
    for (int i = 0; i < 23; ++i) EXPECT_EQ(sorted[i], i);
  }
  EXPECT_NE(order[0], order[1]) << "each epoch should have its own permutation";
}

TEST(LoaderTest, EveryRecordOncePerEpochWithOneConsumer) { ExpectEveryRecordOncePerEpoch(1); }
TEST(LoaderTest, EveryRecordOncePerEpochWithThreeConsumers) { ExpectEveryRecordOncePerEpoch(3); }

TEST(LoaderTest, BatchesDependOnTheSeedOnly) {
  TempDir dir;
  std::vector<std::string> values;
  for (int i = 0; i < 40; ++i) {
    values.push_back(SerializeDatum(RawDatum(
        3, 8, 8, [i](int c, int y, int x) { return (i * 7 + c * 50 + y * 8 + x) % 256; })));
  }
  WriteDb(dir / "db", values);
  auto batches = [&](int workers, uint64_t seed) {
    LoaderOptions options = Options(dir / "db", 6, workers);
    options.seed = seed;
    options.transform.pad = 2;
    options.transform.crop = 8;
    options.transform.mirror = true;
    ImageLoader loader(options);
    std::vector<std::vector<float>> out;
    for (int i = 0; i < 10; ++i) {
      const Batch* batch = loader.Acquire();
      out.emplace_back(batch->images, batch->images + batch->size * 3 * 8 * 8);
      loader.Release(batch);
    }
    return out;
  };
  const auto one = batches(1, 5);
  EXPECT_EQ(one, batches(1, 5));
  EXPECT_EQ(one, batches(3, 5));
  EXPECT_NE(one, batches(1, 6));
}

TEST(LoaderTest, CorruptRecordsAreSkippedAndCounted) {
  TempDir dir;
  std::vector<std::string> values = Records(10);
  values[1] = "\xff\xff\xff";                                                      // not a Datum
  values[4] = SerializeDatum(RawDatum(1, 3, 3, [](int, int, int) { return 4; }));  // other size
  values[4].resize(values[4].size() - 2);  // ... and truncated
  values[6] = SerializeDatum(RawDatum(0, 2, 2, [](int, int, int) { return 6; }));  // no channels
  std::vector<unsigned char> png(testing::TinyPng().begin(), testing::TinyPng().begin() + 40);
  values[8] = SerializeDatum(testing::EncodedDatum(png, 8));  // truncated image
  WriteDb(dir / "db", values);
  LoaderOptions options = Options(dir / "db", 3);
  options.num_classes = 10;
  ImageLoader loader(options);
  auto batches = Drain(&loader, 1, 2);
  std::vector<int> seen;
  for (const auto& [key, records] : batches) {
    if (key.first == 1) seen.insert(seen.end(), records.begin(), records.end());
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int>{0, 2, 3, 5, 7, 9}));
  EXPECT_EQ(loader.corrupt_records(0), 4);
  EXPECT_EQ(loader.corrupt_records(1), 4);
}

TEST(LoaderTest, RestoredStateContinuesAfterTheLastReleasedBatch) {
  TempDir dir;
  WriteDb(dir / "db", Records(30));
  ImageLoader loader(Options(dir / "db", 4, 2));
  Drain(&loader, 1, 1);  // one epoch of 8 batches
  for (int i = 0; i < 3; ++i) loader.Release(loader.Acquire());
  const std::string state = loader.SaveState();
  const auto expected = Drain(&loader, 1, 1);
  ImageLoader fresh(Options(dir / "db", 4, 1));
  fresh.RestoreState(state);
  EXPECT_EQ(Drain(&fresh, 1, 1), expected);
  EXPECT_EQ(expected.begin()->first, (std::pair<int64_t, int64_t>{1, 3}));
  EXPECT_THROW(fresh.RestoreState("garbage"), ValueError);
  ImageLoader other_batch(Options(dir / "db", 5, 1));
  EXPECT_THROW(other_batch.RestoreState(state), ValueError);
}

void ExpectOpenFails(const std::string& path, const std::string& words) {
  try {
    ImageLoader loader(Options(path, 4));
    FAIL() << "opening " << path << " should fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(LoaderTest, MissingNonLmdbAndEmptyPathsFailClearly) {
  TempDir dir;
  ExpectOpenFails(dir / "missing", "exist");
  std::filesystem::create_directory(dir / "junk");
  std::ofstream(dir / "junk/data.mdb") << "this is not an LMDB";
  ExpectOpenFails(dir / "junk", "LMDB");
  WriteDb(dir / "empty", {});
  ExpectOpenFails(dir / "empty", "empty");
}

}  // namespace
}  // namespace crossbow::data
