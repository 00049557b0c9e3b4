#include "data/lmdb_io.h"

#include <glog/logging.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "crossbow/core/enforce.h"
#include "data/mapped_read.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;

std::string_view View(const MDB_val& value) {
  return {static_cast<const char*>(value.mv_data), value.mv_size};
}

MDB_val Val(std::string_view bytes) { return {bytes.size(), const_cast<char*>(bytes.data())}; }

void Check(int rc, const char* what, const std::string& path) {
  CROSSBOW_ENFORCE(rc == MDB_SUCCESS, "LMDB ", what, " failed for ", path, ": ", mdb_strerror(rc));
}

// Closes what an open or a write left half done, so that a throwing constructor leaks nothing.
struct LmdbGuard {
  MDB_env* env;
  MDB_txn* txn = nullptr;
  ~LmdbGuard() {
    if (txn != nullptr) mdb_txn_abort(txn);
    if (env != nullptr) mdb_env_close(env);
  }
};

// One environment per database and process. The reader table lives in the lock file, shared by
// every environment on it, and mdb_env_close frees every slot of its process: closing one of two
// environments on a database broke the other's read transactions (MDB_BAD_RSLOT). Closing takes
// the same lock as opening, so that no open can find an environment while it is being closed.
std::recursive_mutex g_open_mutex;

std::shared_ptr<MDB_env> OpenShared(const std::string& path, bool folder) {
  static std::map<std::string, std::weak_ptr<MDB_env>> open;
  std::error_code ec;
  const std::string key = fs::canonical(path, ec).string();
  std::lock_guard<std::recursive_mutex> lock(g_open_mutex);
  if (auto env = open[key].lock()) return env;
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
  open[key] = env;
  return env;
}

}  // namespace

LmdbReader::LmdbReader(const std::string& path) : path_(path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  CROSSBOW_ENFORCE(fs::exists(status), "LMDB not found: ", path, " does not exist");
  const bool folder = fs::is_directory(status);
  CROSSBOW_ENFORCE(!folder || fs::exists(fs::path(path) / "data.mdb"), "not an LMDB: ", path,
                   " is a folder without data.mdb");

  data_file_ = folder ? (fs::path(path) / "data.mdb").string() : path;
  shared_env_ = OpenShared(path, folder);
  env_ = shared_env_.get();
  CheckFileSize();

  LmdbGuard guard{nullptr};
  Check(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &guard.txn), "txn_begin", path);
  Check(mdb_dbi_open(guard.txn, nullptr, 0, &dbi_), "dbi_open", path);
  MDB_cursor* cursor;
  Check(mdb_cursor_open(guard.txn, dbi_, &cursor), "cursor_open", path);
  int step = MDB_SUCCESS;
  const bool read = ReadMappedPages([&] {
    MDB_val key, value;
    step = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
    while (step == MDB_SUCCESS) {
      keys_.emplace_back(View(key));
      step = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
    }
  });
  mdb_cursor_close(cursor);
  if (!read) FailTruncated("listing its keys");
  Check(step == MDB_NOTFOUND ? MDB_SUCCESS : step, "cursor scan", path);
  CROSSBOW_ENFORCE(!keys_.empty(), "empty LMDB: ", path, " holds no records");
}

void LmdbReader::CheckFileSize() const {
  MDB_envinfo info;
  MDB_stat stat;
  Check(mdb_env_info(env_, &info), "env_info", path_);
  Check(mdb_env_stat(env_, &stat), "env_stat", path_);
  const uint64_t needed = (static_cast<uint64_t>(info.me_last_pgno) + 1) * stat.ms_psize;
  std::error_code ec;
  const uint64_t size = fs::file_size(data_file_, ec);
  CROSSBOW_ENFORCE(!ec, "cannot read the size of ", data_file_, ": ", ec.message());
  CROSSBOW_ENFORCE(size >= needed, "LMDB ", path_, " is truncated: ", data_file_, " has ", size,
                   " bytes, its pages need ", needed, " (a copy cut short or a full disk?)");
}

void LmdbReader::FailTruncated(const std::string& during) const {
  std::error_code ec;
  const auto size = fs::file_size(data_file_, ec);
  CROSSBOW_FAIL("LMDB ", path_, ": ", data_file_, " was truncated while ", during, " (it has ",
                ec ? std::string("no readable size") : std::to_string(size) + " bytes now)",
                "; was it overwritten or cut short by another process?");
}

LmdbReader::~LmdbReader() = default;

LmdbReader::Transaction::Transaction(const LmdbReader& reader) : reader_(reader) {
  Check(mdb_txn_begin(reader.env_, nullptr, MDB_RDONLY, &txn_), "txn_begin", reader.path_);
}

LmdbReader::Transaction::~Transaction() { mdb_txn_abort(txn_); }

std::string_view LmdbReader::Transaction::Get(int64_t index) {
  CROSSBOW_ENFORCE(index >= 0 && index < reader_.size(), "record index ", index,
                   " out of range [0, ", reader_.size(), ") in ", reader_.path_);
  MDB_val key = Val(reader_.keys_[index]), value;
  int rc = MDB_SUCCESS;
  // Copied under the guard: the decoders read the bytes later, outside it.
  const bool read = ReadMappedPages([&] {
    rc = mdb_get(txn_, reader_.dbi_, &key, &value);
    if (rc != MDB_SUCCESS) return;
    value_.resize(value.mv_size);
    std::memcpy(value_.data(), value.mv_data, value.mv_size);
  });
  if (!read) reader_.FailTruncated("reading key '" + reader_.keys_[index] + "'");
  CROSSBOW_ENFORCE(rc == MDB_SUCCESS, "LMDB get of key '", reader_.keys_[index], "' failed in ",
                   reader_.path_, ": ", mdb_strerror(rc));
  return value_;
}

void LmdbReader::Transaction::Renew() {
  mdb_txn_reset(txn_);
  Check(mdb_txn_renew(txn_), "txn_renew", reader_.path_);
}

LmdbWriter::LmdbWriter(const std::string& path, bool overwrite, int commit_every,
                       size_t initial_map_size)
    : path_(path), map_size_(initial_map_size), commit_every_(commit_every) {
  CROSSBOW_ENFORCE_VALUE(commit_every > 0, "commit_every must be positive, got ", commit_every);
  const fs::path folder(path);
  std::error_code ec;
  CROSSBOW_ENFORCE(!fs::exists(folder) || fs::is_directory(folder), "cannot create LMDB ", path,
                   ": it exists and is not a folder");
  const fs::path data_file = folder / "data.mdb";
  if (fs::exists(data_file)) {
    CROSSBOW_ENFORCE(overwrite, "LMDB ", path, " already exists (--overwrite replaces it)");
    fs::remove(data_file);
    fs::remove(folder / "lock.mdb", ec);
  }
  fs::create_directories(folder, ec);
  CROSSBOW_ENFORCE(!ec, "cannot create LMDB folder ", path, ": ", ec.message());

  LmdbGuard guard{nullptr};
  Check(mdb_env_create(&guard.env), "env_create", path);
  Check(mdb_env_set_mapsize(guard.env, map_size_), "set_mapsize", path);
  Check(mdb_env_open(guard.env, path.c_str(), 0, 0664), "open", path);
  env_ = guard.env;
  guard.env = nullptr;
}

LmdbWriter::~LmdbWriter() {
  try {
    Commit();
  } catch (const Error& e) {
    LOG(ERROR) << e.what() << " (" << pending_.size() << " records lost)";
  }
  mdb_env_close(env_);
}

void LmdbWriter::Put(const std::string& key, std::string_view value) {
  CROSSBOW_ENFORCE_VALUE(!key.empty() && key.size() <= 511,
                         "LMDB keys must be 1 to 511 bytes, got ", key.size(),
                         " bytes for a record of ", path_);
  pending_.emplace_back(key, value);
  if (static_cast<int>(pending_.size()) >= commit_every_) Commit();
}

void LmdbWriter::Commit() {
  if (pending_.empty()) return;
  while (true) {
    LmdbGuard guard{nullptr};
    Check(mdb_txn_begin(env_, nullptr, 0, &guard.txn), "txn_begin", path_);
    MDB_dbi dbi;
    Check(mdb_dbi_open(guard.txn, nullptr, 0, &dbi), "dbi_open", path_);
    int rc = MDB_SUCCESS;
    for (const auto& [key, value] : pending_) {
      MDB_val k = Val(key), v = Val(value);
      rc = mdb_put(guard.txn, dbi, &k, &v, 0);
      if (rc != MDB_SUCCESS) break;
    }
    if (rc == MDB_SUCCESS) {
      rc = mdb_txn_commit(guard.txn);
      guard.txn = nullptr;  // a commit frees the transaction, failed or not
    }
    if (rc == MDB_MAP_FULL) {
      if (guard.txn != nullptr) mdb_txn_abort(guard.txn);
      guard.txn = nullptr;
      map_size_ *= 2;
      VLOG(1) << "LMDB " << path_ << " full: map size doubled to " << map_size_ << " bytes";
      Check(mdb_env_set_mapsize(env_, map_size_), "set_mapsize", path_);
      continue;
    }
    Check(rc, "write", path_);
    break;
  }
  written_ += static_cast<int64_t>(pending_.size());
  pending_.clear();
}

}  // namespace crossbow::data
