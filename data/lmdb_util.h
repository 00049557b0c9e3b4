#pragma once

// What the LMDB reader and writer share (data/lmdb_reader.cc, data/lmdb_io.cc).

#include <lmdb.h>

#include <string>
#include <string_view>

#include "crossbow/core/enforce.h"

namespace crossbow::data::lmdb {

inline std::string_view View(const MDB_val& value) {
  return {static_cast<const char*>(value.mv_data), value.mv_size};
}

inline MDB_val Val(std::string_view bytes) {
  return {bytes.size(), const_cast<char*>(bytes.data())};
}

inline void Check(int rc, const char* what, const std::string& path) {
  CROSSBOW_ENFORCE(rc == MDB_SUCCESS, "LMDB ", what, " failed for ", path, ": ", mdb_strerror(rc));
}

// Closes what an open or a write left half done, so that a throwing constructor leaks nothing.
struct Guard {
  MDB_env* env;
  MDB_txn* txn = nullptr;
  ~Guard() {
    if (txn != nullptr) mdb_txn_abort(txn);
    if (env != nullptr) mdb_env_close(env);
  }
};

}  // namespace crossbow::data::lmdb
