#pragma once

#include <lmdb.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace crossbow::data {

// Read-only LMDB database: opened without thread-local lock slots (MDB_NOTLS | MDB_RDONLY),
// its keys listed once at open so that records can be read in any order by index.
// Throws crossbow::Error naming the path when it is missing, not an LMDB, empty, or shorter than
// its pages need (a copy cut short, a full disk): LMDB maps the file, and reading a page past
// its end would kill the process with SIGBUS. `path` is a folder (as Caffe makes it) or a
// single-file LMDB (MDB_NOSUBDIR, e.g. Python's subdir=False). A file truncated while it is read
// makes the read throw, naming the path (data/mapped_read.h), instead of crashing.
class LmdbReader {
 public:
  explicit LmdbReader(const std::string& path);
  ~LmdbReader();
  LmdbReader(const LmdbReader&) = delete;
  LmdbReader& operator=(const LmdbReader&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return static_cast<int64_t>(keys_.size()); }
  const std::string& key(int64_t index) const { return keys_[index]; }

  // A read transaction for one thread; views stay valid until the transaction ends.
  class Transaction {
   public:
    explicit Transaction(const LmdbReader& reader);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    // The value of record `index`, copied out of the map: valid until the next Get.
    std::string_view Get(int64_t index);
    // Ends and restarts the read transaction (releases pages of a long scan).
    void Renew();

   private:
    const LmdbReader& reader_;
    MDB_txn* txn_ = nullptr;
    std::string value_;
  };

 private:
  // Throws when the data file is shorter than the pages LMDB has written.
  void CheckFileSize() const;
  [[noreturn]] void FailTruncated(const std::string& during) const;

  std::string path_;
  std::string data_file_;
  std::shared_ptr<MDB_env> shared_env_;  // with every other reader of this DB in the process
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  std::vector<std::string> keys_;
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
