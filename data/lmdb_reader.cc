#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "crossbow/core/enforce.h"
#include "data/lmdb_io.h"
#include "data/lmdb_util.h"
#include "data/mapped_read.h"

namespace crossbow::data {

// One per database file and process: the environment, the metadata and the key index. The
// reader table lives in the lock file, shared by every environment on it, and mdb_env_close
// frees every slot of its process: closing one of two environments on a database broke the
// other's read transactions (MDB_BAD_RSLOT), so there is one environment.
struct SharedDb {
  std::string path, data_file;
  ino_t inode = 0;  // of the data file
  std::shared_ptr<MDB_env> env;
  MDB_dbi dbi = 0;
  std::optional<DbMeta> meta;
  KeyIndex keys;
};

namespace {

namespace fs = std::filesystem;
using namespace lmdb;

std::atomic<int64_t> g_records_read{0};

// Closing takes the same lock as opening, so that no open finds an environment being closed.
std::recursive_mutex g_open_mutex;

// Under g_open_mutex.
std::shared_ptr<MDB_env> OpenEnv(const std::string& path, const std::string& id, bool folder) {
  static std::map<std::string, std::weak_ptr<MDB_env>> open;
  if (auto env = open[id].lock()) return env;
  MDB_env* raw = nullptr;
  Check(mdb_env_create(&raw), "env_create", path);
  std::shared_ptr<MDB_env> env(raw, [](MDB_env* e) {
    std::lock_guard<std::recursive_mutex> close_lock(g_open_mutex);
    mdb_env_close(e);
  });
  const unsigned flags = MDB_RDONLY | MDB_NOTLS | (folder ? 0 : MDB_NOSUBDIR);
  const int rc = mdb_env_open(raw, path.c_str(), flags, 0664);
  CROSSBOW_ENFORCE(rc != MDB_INVALID && rc != MDB_VERSION_MISMATCH, "not an LMDB: ", path, " (",
                   mdb_strerror(rc), ")");
  Check(rc, "open", path);
  open[id] = env;
  return env;
}

// The bytes LMDB's map spans: its map size, which the writer chose (Python's lmdb takes any
// map_size and LMDB stores it as given), rounded up to whole pages as mmap maps it.
size_t MapBytes(const MDB_envinfo& info) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (info.me_mapsize + page - 1) / page * page;
}

// Where LMDB mapped the data file: mdb_env_info tells only with MDB_FIXEDMAP, so it is the
// mapping of the file's inode from offset 0 spanning `size` bytes in /proc/self/maps; null where
// there is none.
void* MapAddress(const SharedDb& db, size_t size) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0, offset = 0, inode = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %*s %lx %*s %lu", &start, &end, &offset, &inode) == 4 &&
        inode == db.inode && offset == 0 && end - start == size) {
      return reinterpret_cast<void*>(start);
    }
  }
  return nullptr;
}

// madvise over LMDB's whole map; false where the map is not found or the kernel refuses.
bool Advise(const SharedDb& db, int advice) {
  MDB_envinfo info;
  Check(mdb_env_info(db.env.get(), &info), "env_info", db.path);
  const size_t bytes = MapBytes(info);
  void* map = MapAddress(db, bytes);
  return map && madvise(map, bytes, advice) == 0;
}

// Throws when the data file is shorter than the pages LMDB has written.
void CheckFileSize(const SharedDb& db) {
  MDB_envinfo info;
  MDB_stat stat;
  Check(mdb_env_info(db.env.get(), &info), "env_info", db.path);
  Check(mdb_env_stat(db.env.get(), &stat), "env_stat", db.path);
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  std::error_code ec;
  const uint64_t size = fs::file_size(db.data_file, ec);
  CROSSBOW_ENFORCE(!ec, "cannot read the size of ", db.data_file, ": ", ec.message());
  CROSSBOW_ENFORCE(size >= needed, "LMDB ", db.path, " is truncated: ", db.data_file, " has ", size,
                   " bytes, its pages need ", needed, " (a copy cut short or a full disk?)");
}

[[noreturn]] void FailTruncated(const SharedDb& db, const std::string& during) {
  std::error_code ec;
  const auto size = fs::file_size(db.data_file, ec);
  CROSSBOW_FAIL("LMDB ", db.path, ": ", db.data_file, " was truncated while ", during, " (it has ",
                ec ? std::string("no readable size") : std::to_string(size) + " bytes now)",
                "; was it overwritten or cut short by another process?");
}

// LMDB's own count of records; with metadata, the count it states must be the same.
int64_t CountRecords(const SharedDb& db, MDB_txn* txn) {
  MDB_stat stat;
  Check(mdb_stat(txn, db.dbi, &stat), "stat", db.path);
  const auto records = static_cast<int64_t>(stat.ms_entries);
  CROSSBOW_ENFORCE(records > 0, "empty LMDB: ", db.path, " holds no records");
  CROSSBOW_ENFORCE(!db.meta || db.meta->records == records, db.path, " holds ", records,
                   " records but its metadata (", MetaPath(db.path), ") says ",
                   db.meta ? db.meta->records : 0,
                   ": the DB changed after it was written. Rewrite the metadata with crossbow db "
                   "check ",
                   db.path, " --write-metadata (a full scan), or remove it");
  return records;
}

// The walk reads the leaf pages. Where they are a sparse part of the file, the values in
// overflow pages between them (records of images over 2 KB), read-around at each would read all
// of it: 36 GB for 370,822 records of 100 KB, half a minute, against 20 MB and 0.4 s read leaf by
// leaf. Where they are not (1 in 16 pages or more: small records inside the leaves), reading the
// whole file in runs is the quicker (4.3 GB in 3.6 s, against 11 s leaf by leaf, for 1.28 M
// records of 2 KB on this machine's disk).
void ListKeys(SharedDb* db, MDB_txn* txn) {
  MDB_stat stat;
  Check(mdb_stat(txn, db->dbi, &stat), "stat", db->path);
  const size_t pages = stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages;
  const bool sparse = 16 * stat.ms_leaf_pages < pages;
  if (sparse) Advise(*db, MADV_RANDOM);
  MDB_cursor* cursor;
  Check(mdb_cursor_open(txn, db->dbi, &cursor), "cursor_open", db->path);
  int step = MDB_SUCCESS;
  const bool read = ReadMappedPages([&] {
    MDB_val key, value;
    step = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
    while (step == MDB_SUCCESS) {
      db->keys.Append(View(key));
      step = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
    }
  });
  mdb_cursor_close(cursor);
  if (sparse) Advise(*db, MADV_NORMAL);
  db->keys.Shrink();
  if (!read) FailTruncated(*db, "listing its keys");
  Check(step == MDB_NOTFOUND ? MDB_SUCCESS : step, "cursor scan", db->path);
}

std::shared_ptr<const SharedDb> Open(const std::string& path, bool use_meta) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  CROSSBOW_ENFORCE(fs::exists(status), "LMDB not found: ", path, " does not exist");
  const bool folder = fs::is_directory(status);
  const std::string data_file = folder ? (fs::path(path) / "data.mdb").string() : path;
  struct stat file;
  CROSSBOW_ENFORCE(::stat(data_file.c_str(), &file) == 0, "not an LMDB: ", path,
                   " is a folder without data.mdb");
  // A DB written anew under the same path (a new inode) is another database.
  const std::string id = fs::canonical(path, ec).string() + "#" + std::to_string(file.st_ino);
  static std::map<std::string, std::weak_ptr<const SharedDb>> open;
  std::lock_guard<std::recursive_mutex> lock(g_open_mutex);
  const std::string mode = id + (use_meta ? "" : "#without-meta");
  if (auto db = open[mode].lock()) return db;

  auto db = std::make_shared<SharedDb>();
  db->path = path;
  db->data_file = data_file;
  db->inode = file.st_ino;
  db->env = OpenEnv(path, id, folder);
  CheckFileSize(*db);
  if (use_meta) db->meta = ReadMeta(path);
  Guard guard{nullptr};
  Check(mdb_txn_begin(db->env.get(), nullptr, MDB_RDONLY, &guard.txn), "txn_begin", path);
  Check(mdb_dbi_open(guard.txn, nullptr, 0, &db->dbi), "dbi_open", path);
  const int64_t records = CountRecords(*db, guard.txn);
  if (db->meta && db->meta->key_format == "counter") {
    db->keys = KeyIndex::Counters(records);
  } else {
    db->keys.Reserve(records);
    ListKeys(db.get(), guard.txn);
  }
  open[mode] = db;
  return db;
}

}  // namespace

KeyIndex KeyIndex::Counters(int64_t records) {
  KeyIndex index;
  index.counters_ = true;
  index.records_ = records;
  return index;
}

void KeyIndex::Append(std::string_view key) {
  CROSSBOW_ENFORCE(buffer_.size() + key.size() <= UINT32_MAX,
                   "the keys of this LMDB take more than 4 GiB, more than the key index holds");
  buffer_.append(key);
  offsets_.push_back(buffer_.size());
  ++records_;
}

void KeyIndex::Shrink() {
  buffer_.shrink_to_fit();
  offsets_.shrink_to_fit();
}

LmdbReader::LmdbReader(const std::string& path, bool use_meta)
    : path_(path), db_(Open(path, use_meta)) {}

LmdbReader::~LmdbReader() = default;

int64_t LmdbReader::size() const { return db_->keys.size(); }
const KeyIndex& LmdbReader::index() const { return db_->keys; }
const std::optional<DbMeta>& LmdbReader::meta() const { return db_->meta; }
int64_t LmdbReader::RecordsRead() { return g_records_read.load(std::memory_order_relaxed); }

bool LmdbReader::AdviseRandomReads(bool random) const {
  return Advise(*db_, random ? MADV_RANDOM : MADV_NORMAL);
}

uint64_t LmdbReader::file_bytes() const {
  std::error_code ec;
  const uint64_t bytes = fs::file_size(db_->data_file, ec);
  return ec ? 0 : bytes;
}

std::string LmdbReader::key(int64_t index) const {
  if (!db_->keys.counters()) return std::string(db_->keys.key(index));
  Transaction transaction(*this);
  return transaction.Key(index);
}

void LmdbReader::FailTruncated(const std::string& during) const {
  crossbow::data::FailTruncated(*db_, during);
}

LmdbReader::Transaction::Transaction(const LmdbReader& reader) : reader_(reader) {
  const SharedDb& db = *reader.db_;
  Check(mdb_txn_begin(db.env.get(), nullptr, MDB_RDONLY, &txn_), "txn_begin", reader.path_);
  const int rc = mdb_cursor_open(txn_, db.dbi, &cursor_);
  if (rc != MDB_SUCCESS) mdb_txn_abort(txn_);
  Check(rc, "cursor_open", reader.path_);
}

LmdbReader::Transaction::~Transaction() {
  mdb_cursor_close(cursor_);
  mdb_txn_abort(txn_);
}

void LmdbReader::Transaction::Seek(int64_t index, MDB_val* key, MDB_val* value) {
  CROSSBOW_ENFORCE(index >= 0 && index < reader_.size(), "record index ", index,
                   " out of range [0, ", reader_.size(), ") in ", reader_.path_);
  const KeyIndex& keys = reader_.db_->keys;
  sought_ = keys.counters() ? CounterKey(index) : std::string(keys.key(index));
  *key = Val(sought_);
  int rc = MDB_SUCCESS;
  const bool read = ReadMappedPages([&] {
    rc = mdb_cursor_get(cursor_, key, value, keys.counters() ? MDB_SET_RANGE : MDB_SET_KEY);
  });
  if (!read) reader_.FailTruncated("reading key '" + sought_ + "'");
  CROSSBOW_ENFORCE(rc != MDB_SUCCESS || !keys.counters() || IsCounterKey(View(*key), index),
                   reader_.path_, ": no key '", sought_, "' for record ", index, " (found '",
                   View(*key),
                   "'), although its metadata says the keys count the records; rewrite it with "
                   "crossbow db check ",
                   reader_.path_, " --write-metadata");
  CROSSBOW_ENFORCE(rc == MDB_SUCCESS, "LMDB get of key '", sought_, "' failed in ", reader_.path_,
                   ": ", mdb_strerror(rc));
  key_.assign(View(*key));
}

std::string LmdbReader::Transaction::Key(int64_t index) {
  MDB_val key, value;
  Seek(index, &key, &value);
  return key_;
}

std::string_view LmdbReader::Transaction::Get(int64_t index) {
  MDB_val key, value;
  Seek(index, &key, &value);
  // Copied under the guard: the decoders read the bytes later, outside it.
  const bool read = ReadMappedPages([&] {
    value_.resize(value.mv_size);
    std::memcpy(value_.data(), value.mv_data, value.mv_size);
  });
  if (!read) reader_.FailTruncated("reading key '" + sought_ + "'");
  g_records_read.fetch_add(1, std::memory_order_relaxed);
  return value_;
}

void LmdbReader::Transaction::Renew() {
  mdb_txn_reset(txn_);
  Check(mdb_txn_renew(txn_), "txn_renew", reader_.path_);
  Check(mdb_cursor_renew(txn_, cursor_), "cursor_renew", reader_.path_);
}

}  // namespace crossbow::data
