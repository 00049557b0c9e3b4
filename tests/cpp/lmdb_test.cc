#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "crossbow/core/enforce.h"
#include "data/lmdb_io.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

using crossbow::testing::ErrorOf;

namespace fs = std::filesystem;

class LmdbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) /
            ("lmdb_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Path(const std::string& name) const { return (root_ / name).string(); }

  static std::string Value(int i) {
    return std::string(100 + i % 7, static_cast<char>('a' + i % 26));
  }

  fs::path root_;
};

// Runs `body` and returns the crossbow::Error message it throws, failing when it does not.
TEST_F(LmdbTest, WritesInBatchesAndReadsBackByIndex) {
  {
    LmdbWriter writer(Path("db"), false, /*commit_every=*/7);
    for (int i = 0; i < 50; ++i) writer.Put("key" + std::to_string(1000 + i), Value(i));
    EXPECT_EQ(writer.written(), 49);  // seven full batches committed, one record pending
  }                                   // the destructor commits the rest
  LmdbReader reader(Path("db"));
  ASSERT_EQ(reader.size(), 50);
  LmdbReader::Transaction txn(reader);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(reader.key(i), "key" + std::to_string(1000 + i));
    EXPECT_EQ(txn.Get(i), Value(i));
  }
  txn.Renew();
  EXPECT_EQ(txn.Get(49), Value(49));
  EXPECT_NE(ErrorOf([&] { txn.Get(50); }).find("out of range"), std::string::npos);
}

TEST_F(LmdbTest, DoublesTheMapWhenFull) {
  const std::string big(64 << 10, 'x');
  LmdbWriter writer(Path("db"), false, 10, /*initial_map_size=*/256 << 10);
  for (int i = 0; i < 40; ++i) writer.Put("k" + std::to_string(100 + i), big);
  writer.Commit();
  EXPECT_GE(writer.map_size(), size_t{2560} << 10);
  EXPECT_EQ(writer.written(), 40);
  LmdbReader reader(Path("db"));
  LmdbReader::Transaction txn(reader);
  ASSERT_EQ(reader.size(), 40);
  EXPECT_EQ(txn.Get(39), big);
}

// Writers choose any map size (Python's lmdb stores its map_size as given): the read advice
// reaches a map whose size is not a whole number of pages, as it does a converter's.
TEST_F(LmdbTest, ReadAdviceReachesAMapOfAnySize) {
  for (const size_t map_size : {size_t{64} << 20, size_t{100000001}, size_t{3158073}}) {
    const std::string path = Path("db" + std::to_string(map_size));
    { LmdbWriter(path, false, 10, map_size).Put("00000000", "x"); }
    LmdbReader reader(path);
    EXPECT_TRUE(reader.AdviseRandomReads(true)) << map_size;
    EXPECT_TRUE(reader.AdviseRandomReads(false)) << map_size;
  }
}

TEST_F(LmdbTest, ConcurrentReadersEachWithTheirTransaction) {
  {
    LmdbWriter writer(Path("db"));
    for (int i = 0; i < 200; ++i) writer.Put("k" + std::to_string(1000 + i), Value(i));
  }
  LmdbReader reader(Path("db"));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      LmdbReader::Transaction txn(reader);
      for (int i = t; i < 200; i += 4) mismatches[t] += txn.Get(i) != Value(i);
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST_F(LmdbTest, RefusesToReplaceADbUnlessAsked) {
  { LmdbWriter(Path("db")).Put("a", "1"); }
  EXPECT_NE(ErrorOf([&] { LmdbWriter writer(Path("db")); }).find("already exists"),
            std::string::npos);
  { LmdbWriter(Path("db"), /*overwrite=*/true).Put("b", "2"); }
  LmdbReader reader(Path("db"));
  ASSERT_EQ(reader.size(), 1);
  EXPECT_EQ(reader.key(0), "b");
  EXPECT_ERROR(LmdbWriter(Path("db"), true).Put("", "empty key"), ValueError,
               "LMDB keys must be 1 to 511 bytes, got 0 bytes for a record of " + Path("db"));
}

TEST_F(LmdbTest, ClearErrorsForMissingNonLmdbAndEmptyPaths) {
  EXPECT_NE(ErrorOf([&] { LmdbReader r(Path("nowhere")); }).find("not found: " + Path("nowhere")),
            std::string::npos);
  fs::create_directories(Path("plain_folder"));
  EXPECT_NE(ErrorOf([&] { LmdbReader r(Path("plain_folder")); }).find("not an LMDB"),
            std::string::npos);
  fs::create_directories(Path("garbage"));
  std::ofstream(Path("garbage/data.mdb")) << std::string(20000, 'g');
  EXPECT_NE(ErrorOf([&] { LmdbReader r(Path("garbage")); }).find("not an LMDB: " + Path("garbage")),
            std::string::npos);
  std::ofstream(Path("garbage_file")) << std::string(20000, 'g');
  EXPECT_NE(ErrorOf([&] { LmdbReader r(Path("garbage_file")); }).find("not an LMDB"),
            std::string::npos);
  { LmdbWriter writer(Path("empty")); }
  EXPECT_NE(ErrorOf([&] { LmdbReader r(Path("empty")); }).find("empty LMDB: " + Path("empty")),
            std::string::npos);
}

}  // namespace
}  // namespace crossbow::data
