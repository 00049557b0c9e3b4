#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/db_meta.h"

namespace crossbow::data {

// The keys of one DB in order: every key in one buffer with offsets, or nothing at all when
// the DB's metadata says that they are the converters' counters (record i's key starts with
// "%08d" of i), so that a record is found from its position. Built once per process and DB,
// and shared by every reader of it (loader, label check, evaluation).
class KeyIndex {
 public:
  static KeyIndex Counters(int64_t records);
  void Append(std::string_view key);
  void Shrink();  // gives back what the appends reserved beyond the keys
  int64_t size() const { return records_; }
  bool counters() const { return counters_; }
  std::string_view key(int64_t index) const {
    return std::string_view(buffer_).substr(offsets_[index], offsets_[index + 1] - offsets_[index]);
  }
  size_t bytes() const { return buffer_.capacity() + offsets_.capacity() * sizeof(uint32_t); }
  void Reserve(int64_t records) { offsets_.reserve(records + 1); }

 private:
  bool counters_ = false;
  int64_t records_ = 0;
  std::string buffer_;
  std::vector<uint32_t> offsets_{0};  // 4 bytes a key: ImageNet's 1.28 M keys take 46 MB
};

struct SharedDb;

// Read-only LMDB database: opened without thread-local lock slots (MDB_NOTLS | MDB_RDONLY), its
// records readable in any order by index through a KeyIndex shared by every reader of the DB in
// the process. With the metadata `crossbow convert` writes beside the DB (data/db_meta.h) its
// record count must be LMDB's (else the DB changed since: an error), and counter keys need no
// key listing, so opening reads a few pages whatever the DB's size.
// Throws crossbow::Error naming the path when it is missing, not an LMDB, empty, or shorter than
// its pages need (a copy cut short, a full disk): LMDB maps the file, and reading a page past
// its end would kill the process with SIGBUS. `path` is a folder (as Caffe makes it) or a
// single-file LMDB (MDB_NOSUBDIR, e.g. Python's subdir=False). A file truncated while it is read
// makes the read throw, naming the path (data/mapped_read.h), instead of crashing.
class LmdbReader {
 public:
  // `use_meta` false: as if the DB had no metadata (to check or rewrite it).
  explicit LmdbReader(const std::string& path, bool use_meta = true);
  ~LmdbReader();
  LmdbReader(const LmdbReader&) = delete;
  LmdbReader& operator=(const LmdbReader&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const;
  std::string key(int64_t index) const;
  const KeyIndex& index() const;
  // The DB's metadata, when it has some.
  const std::optional<DbMeta>& meta() const;
  // Bytes of the data file.
  uint64_t file_bytes() const;
  // Tells the kernel how the map will be read: at random (no read-around on a page fault, which
  // is read_ahead_kb, 8 MiB on some virtual disks, of which a random read uses one record) or
  // in runs (its default read-around). For every reader of the DB in the process; false where
  // the kernel refused (a hint: reads work either way).
  bool AdviseRandomReads(bool random) const;
  // Records read through any Transaction of this process so far (tests bound start-up reads).
  static int64_t RecordsRead();

  // A read transaction for one thread; views stay valid until the transaction ends.
  class Transaction {
   public:
    explicit Transaction(const LmdbReader& reader);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    // The value of record `index`, copied out of the map: valid until the next Get.
    std::string_view Get(int64_t index);
    // The key of record `index` (a lookup where the index holds counters).
    std::string Key(int64_t index);
    // The key of the record read last.
    const std::string& last_key() const { return key_; }
    // Ends and restarts the read transaction (releases pages of a long scan).
    void Renew();

   private:
    // Positions the cursor on record `index`; throws naming the key where it is not there.
    void Seek(int64_t index, MDB_val* key, MDB_val* value);
    const LmdbReader& reader_;
    MDB_txn* txn_ = nullptr;
    MDB_cursor* cursor_ = nullptr;
    std::string value_;
    std::string sought_;  // the key (or counter) of the last Seek
    std::string key_;     // the key it found
  };

 private:
  [[noreturn]] void FailTruncated(const std::string& during) const;

  std::string path_;
  std::shared_ptr<const SharedDb> db_;
};

// Writes records in batched transactions; doubles the map size and retries on MDB_MAP_FULL.
class LmdbWriter {
 public:
  // Creates `path` (a folder, as Caffe's tools make it); fails if it already holds a DB
  // unless `overwrite`. The map starts at `initial_map_size` bytes and doubles when full.
  explicit LmdbWriter(const std::string& path, bool overwrite = false, int commit_every = 1000,
                      size_t initial_map_size = size_t{64} << 20);
  ~LmdbWriter();  // commits what is pending
  LmdbWriter(const LmdbWriter&) = delete;
  LmdbWriter& operator=(const LmdbWriter&) = delete;

  void Put(const std::string& key, std::string_view value);
  void Commit();
  int64_t written() const { return written_; }  // records committed so far
  size_t map_size() const { return map_size_; }

 private:
  std::string path_;
  MDB_env* env_ = nullptr;
  size_t map_size_;
  std::vector<std::pair<std::string, std::string>> pending_;
  int commit_every_;
  int64_t written_ = 0;
};

}  // namespace crossbow::data
