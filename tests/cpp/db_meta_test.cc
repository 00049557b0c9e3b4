// The metadata beside a DB (data/db_meta.h), the shared key index, start-up reads that do not
// grow with the DB, labels checked as records are read, and atomic conversions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "data/convert_sink.h"
#include "data/converters.h"
#include "data/loader.h"
#include "data_test_util.h"
#include "tests/cpp/expect_error.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;
using crossbow::testing::ErrorOf;
using testing::RawDatum;
using testing::TempDir;
using testing::WriteDb;

Datum Record(int i, int label) {
  return RawDatum(
      3, 8 + i % 3, 8, [i](int c, int y, int x) { return (i + c + y + x) % 7; }, label);
}

// n records written as a converter writes them (keys "%08d_name", metadata beside the DB).
void Convert(const std::string& db, int n, const std::function<int(int)>& label) {
  WriteOptions quiet;
  quiet.progress = false;
  ConvertSink sink(db, n, quiet);
  for (int i = 0; i < n; ++i)
    sink.Write(IndexKey(i, "img" + std::to_string(i)), Record(i, label(i)));
  sink.Finish();
}

std::vector<std::string> Serialised(int n, const std::function<int(int)>& label) {
  std::vector<std::string> values;
  for (int i = 0; i < n; ++i) values.push_back(SerializeDatum(Record(i, label(i))));
  return values;
}

LoaderOptions Options(const std::string& path, int num_classes) {
  LoaderOptions options = testing::SmallBatches(path, num_classes, 1);
  options.slots = 4;
  return options;
}

void ExpectContains(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& word : words) EXPECT_NE(text.find(word), std::string::npos) << text;
}

// Appends one record with the LMDB API, as a tool that knows nothing of the metadata would.
void AppendRecord(const std::string& db, const std::string& key, const std::string& value) {
  MDB_env* env;
  ASSERT_EQ(mdb_env_create(&env), 0);
  ASSERT_EQ(mdb_env_set_mapsize(env, size_t{64} << 20), 0);
  ASSERT_EQ(mdb_env_open(env, db.c_str(), 0, 0664), 0);
  MDB_txn* txn;
  MDB_dbi dbi;
  ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
  ASSERT_EQ(mdb_dbi_open(txn, nullptr, 0, &dbi), 0);
  MDB_val k{key.size(), const_cast<char*>(key.data())};
  MDB_val v{value.size(), const_cast<char*>(value.data())};
  ASSERT_EQ(mdb_put(txn, dbi, &k, &v, 0), 0);
  ASSERT_EQ(mdb_txn_commit(txn), 0);
  mdb_env_close(env);
}

TEST(DbMeta, ConvertersWriteItAndReadersReadItBack) {
  TempDir dir;
  Convert(dir / "db", 30, [](int i) { return 2 + i % 5; });
  ASSERT_TRUE(fs::exists(dir / "db/crossbow_meta.json"));
  const std::optional<DbMeta> meta = ReadMeta(dir / "db");
  ASSERT_TRUE(meta.has_value());
  EXPECT_EQ(meta->records, 30);
  EXPECT_EQ(meta->min_label, 2);
  EXPECT_EQ(meta->max_label, 6);
  EXPECT_EQ(meta->min_key, "00000000_img0");
  EXPECT_EQ(meta->max_key, "00000004_img4");
  EXPECT_EQ(meta->key_format, "counter");
  EXPECT_EQ(meta->height.min, 8);
  EXPECT_EQ(meta->height.max, 10);
  EXPECT_NEAR(meta->height.mean(), (10 * 8 + 10 * 9 + 10 * 10) / 30.0, 1e-9);
  EXPECT_EQ(meta->width.max, 8);
  EXPECT_EQ(meta->channels.min, 3);
  // A full scan finds what the converter recorded.
  const DbCheck check = CheckDb(dir / "db", false, false);
  EXPECT_TRUE(check.agrees()) << check.ToString();
  EXPECT_EQ(MetaToJson(check.found), MetaToJson(*meta));
}

TEST(DbMeta, LabelRunsSayWhetherTheRecordsAreInLabelOrder) {
  TempDir dir;
  Convert(dir / "mixed", 30, [](int i) { return i % 5; });
  Convert(dir / "sorted", 30, [](int i) { return i / 10; });
  EXPECT_EQ(ReadMeta(dir / "mixed")->label_runs, 30);
  EXPECT_EQ(ReadMeta(dir / "sorted")->label_runs, 3);
  EXPECT_EQ(CheckDb(dir / "sorted", false, false).found.label_runs, 3);
  ExpectContains(CheckDb(dir / "sorted", false, false).ToString(),
                 {"in label order (runs of 10 records)"});
  ExpectContains(CheckDb(dir / "mixed", false, false).ToString(), {"labels interleaved"});
  // Metadata written before the runs were recorded reads as not knowing them.
  std::string json = MetaToJson(*ReadMeta(dir / "mixed"));
  json.erase(json.find("\"label_runs\""),
             json.find('\n', json.find("\"label_runs\"")) + 1 - json.find("\"label_runs\""));
  std::ofstream(MetaPath(dir / "mixed")) << json;
  EXPECT_EQ(ReadMeta(dir / "mixed")->label_runs, -1) << json;
}

TEST(DbMeta, TheUpFrontLabelCheckUsesTheMetadataAndNamesTheRecord) {
  TempDir dir;
  Convert(dir / "db", 200, [](int i) { return i == 150 ? 12 : i % 10; });
  const int64_t before = LmdbReader::RecordsRead();
  ExpectContains(ErrorOf([&] { ImageLoader loader(Options(dir / "db", 10)); }),
                 {dir / "db", "record 00000150_img150", "label 12", "crossbow_meta.json"});
  EXPECT_EQ(LmdbReader::RecordsRead() - before, 0) << "refused from the metadata alone";
  ImageLoader enough(Options(dir / "db", 13));
}

TEST(DbMeta, ARecordCountThatDisagreesWithTheMetadataIsRefusedAtOpen) {
  TempDir dir;
  Convert(dir / "db", 20, [](int i) { return i % 3; });
  AppendRecord(dir / "db", "00000020_late", SerializeDatum(Record(20, 1)));
  ExpectContains(ErrorOf([&] { LmdbReader reader(dir / "db"); }),
                 {dir / "db", "holds 21 records", "says 20", "db check", "--write-metadata"});
  // The check reads the records, and rewriting the metadata makes the DB usable again.
  const DbCheck check = CheckDb(dir / "db", /*write_meta=*/true, false);
  EXPECT_FALSE(check.agrees());
  ExpectContains(check.ToString(), {"disagrees", "says 20 records", "wrote"});
  LmdbReader reader(dir / "db");
  EXPECT_EQ(reader.size(), 21);
  EXPECT_EQ(reader.key(20), "00000020_late");
}

TEST(DbMeta, MetadataThatIsNotOursIsAnErrorNamingTheFile) {
  TempDir dir;
  Convert(dir / "db", 4, [](int) { return 0; });
  std::ofstream(dir / "db/crossbow_meta.json") << "{\"records\": 4}";
  ExpectContains(ErrorOf([&] { LmdbReader reader(dir / "db"); }),
                 {"crossbow_meta.json is not the metadata", "--write-metadata"});
}

// Keys the converters write need no listing: a record is found from its position.
TEST(DbMeta, CounterKeysAreFoundByPositionAndListedKeysAreSharedByEveryReader) {
  TempDir dir;
  Convert(dir / "counted", 50, [](int i) { return i % 4; });
  LmdbReader counted(dir / "counted");
  EXPECT_TRUE(counted.index().counters());
  EXPECT_LT(counted.index().bytes(), 64u) << "no key kept in memory";
  LmdbReader::Transaction transaction(counted);
  for (int i : {0, 17, 49}) {
    Datum datum;
    const std::string_view bytes = transaction.Get(i);
    ASSERT_TRUE(ParseDatum(bytes.data(), bytes.size(), &datum, nullptr));
    EXPECT_EQ(datum.label, i % 4);
    EXPECT_EQ(transaction.last_key(), IndexKey(i, "img" + std::to_string(i)));
  }
  EXPECT_EQ(counted.key(17), "00000017_img17");

  WriteDb(dir / "caffe", Serialised(50, [](int i) { return i % 4; }));
  LmdbReader first(dir / "caffe"), second(dir / "caffe");
  EXPECT_FALSE(first.index().counters());
  EXPECT_EQ(&first.index(), &second.index()) << "one index per DB and process";
  EXPECT_EQ(first.key(49), "00000049");
  EXPECT_EQ(first.index().bytes(), 50 * 8 + 51 * sizeof(uint32_t)) << "one buffer and offsets";
}

// Bytes of `file` in the page cache (mincore over a mapping of it).
int64_t ResidentBytes(const std::string& file) {
  const int fd = open(file.c_str(), O_RDONLY);
  const auto size = static_cast<size_t>(fs::file_size(file));
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> resident((size + page - 1) / page);
  const int rc = mincore(map, size, resident.data());
  munmap(map, size);
  close(fd);
  EXPECT_EQ(rc, 0);
  int64_t pages = 0;
  for (unsigned char r : resident) pages += r & 1;
  return pages * page;
}

// Drops `file`'s pages from the page cache; false where they stay (tmpfs keeps files in memory).
bool Evict(const std::string& file) {
  const int fd = open(file.c_str(), O_RDONLY);
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);
  return ResidentBytes(file) < (int64_t{1} << 20);
}

// A random read order must not pull the kernel's read-around (read_ahead_kb: 128 KiB to 8 MiB)
// into the page cache with each record: from a DB larger than memory that is most of the disk's
// bandwidth spent on pages nobody reads.
// n records of side x side colour pixels, converted (counter keys, metadata).
void ConvertImages(const std::string& db, int n, int side) {
  WriteOptions quiet;
  quiet.progress = false;
  ConvertSink sink(db, n, quiet);
  for (int i = 0; i < n; ++i) {
    sink.Write(IndexKey(i, "r"),
               RawDatum(
                   3, side, side,
                   [i](int c, int y, int x) { return (i * 7 + c + y * 3 + x) % 251; }, i % 10));
  }
  sink.Finish();
}

TEST(DbMeta, RandomReadsBringInOnlyTheirOwnPages) {
  TempDir dir;
  ConvertImages(dir / "db", 16000, 32);  // records of 3 KiB, a page each: a 64 MiB DB
  const std::string data = dir / "db/data.mdb";
  if (!Evict(data)) GTEST_SKIP() << "the page cache keeps " << data << " (tmpfs?)";
  LoaderOptions options = Options(dir / "db", 10);
  options.read_order = "random";
  ImageLoader loader(options);
  loader.Release(loader.Acquire());
  // The ring holds a few batches of 4: some tens of records, a page or two each, and the tree's
  // branch pages; read-around would bring in at least 128 KiB a record.
  EXPECT_LT(ResidentBytes(data), int64_t{1} << 20);
}

// Listing the keys of a DB without metadata reads its leaf pages, not the values between them.
TEST(DbMeta, ListingKeysReadsTheLeavesNotTheValues) {
  TempDir dir;
  ConvertImages(dir / "db", 8000, 64);  // 12 KiB records, 3 overflow pages each: 96 MiB
  const std::string data = dir / "db/data.mdb";
  if (!Evict(data)) GTEST_SKIP() << "the page cache keeps " << data << " (tmpfs?)";
  LmdbReader reader(dir / "db", /*use_meta=*/false);
  EXPECT_FALSE(reader.index().counters());
  // About 80 leaf pages and their branches; read-around would bring in 128 KiB or more at each.
  EXPECT_LT(ResidentBytes(data), int64_t{2} << 20);
}

// Opening reads at most the first record, and the first batch what the ring holds, whatever
// the DB's size; the label of a record deep in a DB without metadata stops the run when read.
TEST(DbMeta, StartUpReadsDoNotGrowWithTheDbAndLabelsAreCheckedOnRead) {
  TempDir dir;
  const int n = 3000;
  WriteDb(dir / "caffe", Serialised(n, [](int i) { return i == 2900 ? 10 : i % 10; }));
  Convert(dir / "converted", n, [](int i) { return i % 10; });
  for (const char* name : {"caffe", "converted"}) {
    const int64_t before = LmdbReader::RecordsRead();
    LoaderOptions options = Options(dir / name, 10);
    options.shuffle = false;
    ImageLoader loader(options);
    loader.Release(loader.Acquire());
    // The probe, and the ring's 4 slots (plus the one released) of 4 records.
    EXPECT_LE(LmdbReader::RecordsRead() - before, 1 + 5 * 4) << name;
  }
  LoaderOptions options = Options(dir / "caffe", 10);
  options.shuffle = false;
  ImageLoader loader(options);
  const std::string error = ErrorOf([&] {
    for (int b = 0; b < n / 4; ++b) loader.Release(loader.Acquire());
  });
  ExpectContains(error, {dir / "caffe", "record 00002900 has label 10", "outside [0, 10)"});
}

TEST(DbMeta, ADbIsWrittenUnderATemporaryNameAndRenamedWhenWhole) {
  TempDir dir;
  WriteOptions quiet;
  quiet.progress = false;
  {
    ConvertSink sink(dir / "db", 10, quiet);
    for (int i = 0; i < 10; ++i) sink.Write(IndexKey(i), Record(i, 0));
    EXPECT_FALSE(fs::exists(dir / "db")) << "a DB being written is never taken for whole";
    EXPECT_TRUE(fs::exists(dir / "db.incomplete/data.mdb"));
    // Destroyed without Finish, as an error thrown mid-conversion does.
  }
  EXPECT_FALSE(fs::exists(dir / "db"));
  EXPECT_FALSE(fs::exists(dir / "db.incomplete"));
  // What a crash leaves (a DB.incomplete) is neither opened as the DB nor in the way.
  WriteDb(dir / "db.incomplete", Serialised(3, [](int) { return 0; }));
  ExpectContains(ErrorOf([&] { LmdbReader reader(dir / "db"); }), {"not found"});
  Convert(dir / "db", 5, [](int) { return 1; });
  EXPECT_EQ(LmdbReader(dir / "db").size(), 5);
  EXPECT_FALSE(fs::exists(dir / "db.incomplete"));
  ExpectContains(ErrorOf([&] { Convert(dir / "db", 5, [](int) { return 1; }); }),
                 {"already exists", "--overwrite"});
  ConvertSink over(dir / "db", 2, [] {
    WriteOptions o;
    o.progress = false;
    o.overwrite = true;
    return o;
  }());
  over.Write(IndexKey(0), Record(0, 0));
  EXPECT_EQ(LmdbReader(dir / "db").size(), 5) << "the old DB stays until the new one is whole";
  over.Finish();
  EXPECT_EQ(LmdbReader(dir / "db").size(), 1);
}

TEST(DbMeta, TheProgressLineGivesAnEta) {
  Progress progress("db", 1000, false);
  progress.Advance(10);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ExpectContains(progress.Text(), {"10/1000", "records/s, ETA "});
  progress.Advance(990);
  EXPECT_EQ(progress.Text().find("ETA"), std::string::npos) << "none when done";
}

}  // namespace
}  // namespace crossbow::data
