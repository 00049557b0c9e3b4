// The loader and the LMDB reader against bad data: labels out of range, truncated files (at
// open and while reading), and consumers that hold more batches than the default ring.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "data/converters.h"
#include "data/loader.h"
#include "data_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

using crossbow::testing::ErrorOf;

using testing::RawDatum;
using testing::TempDir;
using testing::WriteDb;

// n records of 3x8x8 pixels, labelled by `label(i)`.
std::vector<std::string> Records(int n, const std::function<int(int)>& label) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) {
    values.push_back(SerializeDatum(RawDatum(
        3, 8, 8, [i](int c, int y, int x) { return (i + c + y + x) % 7; }, label(i))));
  }
  return values;
}

LoaderOptions Options(const std::string& path, int num_classes = 0) {
  return testing::SmallBatches(path, num_classes, 2);
}

void ExpectContains(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& word : words) EXPECT_NE(text.find(word), std::string::npos) << text;
}

// Reads one epoch, releasing each batch.
void ReadEpoch(ImageLoader* loader) {
  for (;;) {
    const Batch* batch = loader->Acquire();
    const bool last = batch->last_in_epoch;
    loader->Release(batch);
    if (last) return;
  }
}

// A DB without metadata (as Caffe makes one) is checked as its records are read.
TEST(LoaderFaults, LabelsOutsideTheClassesStopTheRunNamingTheRecord) {
  TempDir dir;
  WriteDb(dir / "db", Records(40, [](int i) { return i == 17 ? 12 : i % 10; }));
  ExpectContains(ErrorOf([&] {
                   ImageLoader loader(Options(dir / "db", 10));
                   ReadEpoch(&loader);
                 }),
                 {dir / "db", "record 00000017", "label 12", "--num-classes"});
  ImageLoader unchecked(Options(dir / "db"));  // num_classes 0 checks nothing
  ReadEpoch(&unchecked);
  ImageLoader enough(Options(dir / "db", 13));
  ReadEpoch(&enough);
  WriteDb(dir / "negative", Records(8, [](int i) { return i == 3 ? -1 : 0; }));
  ExpectContains(ErrorOf([&] {
                   ImageLoader loader(Options(dir / "negative", 10));
                   ReadEpoch(&loader);
                 }),
                 {"record 00000003", "label -1"});
}

TEST(LoaderFaults, LabelsTxtWithMoreClassesThanTheNetIsRefused) {
  TempDir dir;
  WriteDb(dir / "db", Records(8, [](int i) { return i % 2; }));
  std::ofstream(dir / "db/labels.txt") << "cat\ndog\nbird\n";
  ExpectContains(ErrorOf([&] { ImageLoader loader(Options(dir / "db", 2)); }),
                 {"labels.txt names 3 classes", "has 2"});
  const DbCheck check = CheckDb(dir / "db", /*write_meta=*/false, /*progress=*/false);
  EXPECT_EQ(check.found.classes, 3);
  EXPECT_EQ(check.found.min_label, 0);
  EXPECT_EQ(check.found.max_label, 1);
  EXPECT_EQ(check.found.max_key, "00000001");
}

TEST(LoaderFaults, ATruncatedDataFileIsRefusedAtOpenWithBothSizes) {
  TempDir dir;
  WriteDb(dir / "db", Records(3000, [](int i) { return i % 10; }));
  const std::string file = dir / "db/data.mdb";
  const auto size = std::filesystem::file_size(file);
  std::filesystem::resize_file(file, size / 2);
  ExpectContains(ErrorOf([&] { LmdbReader reader(dir / "db"); }),
                 {dir / "db", "truncated", std::to_string(size / 2) + " bytes", "need"});
  ExpectContains(ErrorOf([&] { ImageLoader loader(Options(dir / "db", 10)); }), {"truncated"});
}

TEST(LoaderFaults, ADataFileTruncatedWhileReadingIsAnErrorNotSigbus) {
  TempDir dir;
  WriteDb(dir / "db", Records(3000, [](int i) { return i % 10; }));
  LmdbReader reader(dir / "db");
  LmdbReader::Transaction transaction(reader);
  EXPECT_FALSE(transaction.Get(2999).empty());
  std::filesystem::resize_file(dir / "db/data.mdb", 8192);
  ExpectContains(ErrorOf([&] {
                   for (int64_t i = reader.size() - 1; i >= 0; --i) transaction.Get(i);
                 }),
                 {dir / "db", "truncated while reading key", "8192 bytes"});
}

TEST(LoaderFaults, TheLoaderStopsWithAnErrorWhenItsDbIsTruncatedUnderIt) {
  TempDir dir;
  WriteDb(dir / "db", Records(3000, [](int i) { return i % 10; }));
  ImageLoader loader(Options(dir / "db", 10));
  std::filesystem::resize_file(dir / "db/data.mdb", 8192);
  ExpectContains(ErrorOf([&] {
                   for (int i = 0; i < 2 * loader.batches_per_epoch(); ++i) {
                     loader.Release(loader.Acquire());
                   }
                 }),
                 {"truncated"});
}

TEST(LoaderFaults, ReserveHeldLetsAConsumerHoldManyBatches) {
  TempDir dir;
  WriteDb(dir / "db", Records(300, [](int i) { return i % 10; }));
  ImageLoader loader(Options(dir / "db"));
  for (int i = 0; i < 3; ++i) loader.Release(loader.Acquire());
  loader.ReserveHeld(40);  // the default ring has 2 * 2 + 2 = 6 slots; now 40 + 2 * 2
  std::vector<const Batch*> held;
  for (int i = 0; i < 40; ++i) held.push_back(loader.Acquire());
  // The ring was rebuilt where the consumer stood: the 4th batch of the epoch comes next.
  EXPECT_EQ(held[0]->index_in_epoch, 3);
  EXPECT_EQ(held[39]->index_in_epoch, 42);
  for (const Batch* batch : held) loader.Release(batch);
  ExpectContains(loader.Describe(), {"44 slots", "next batch 43"});
}

TEST(LoaderFaults, TwoLoadersOfOneDbOutliveEachOther) {
  // LMDB frees every reader slot of a process when one environment on a file closes; the
  // readers share one environment, so closing a loader leaves the other's transactions alone.
  TempDir dir;
  WriteDb(dir / "db", Records(40, [](int i) { return i % 10; }));
  auto first = std::make_unique<ImageLoader>(Options(dir / "db", 10));
  ImageLoader second(Options(dir / "db", 10));
  first->Release(first->Acquire());
  first.reset();
  for (int i = 0; i < 3 * second.batches_per_epoch(); ++i) second.Release(second.Acquire());
}

}  // namespace
}  // namespace crossbow::data
