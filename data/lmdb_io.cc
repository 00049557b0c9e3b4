#include "data/lmdb_io.h"

#include <glog/logging.h>

#include <filesystem>

#include "crossbow/core/enforce.h"
#include "data/lmdb_util.h"

namespace crossbow::data {
namespace {

namespace fs = std::filesystem;
using namespace lmdb;

}  // namespace

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

  Guard guard{nullptr};
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
    Guard guard{nullptr};
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
