// A use of one of SqliteStore's prepared statements. Internal to store/.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace trainyard::store {

// The last error of `db` as a Status. A full disk says so plainly, since
// the caller can do something about it: nothing of the write was kept, and
// the same write succeeds once there is room again. (Kubernetes answers
// 500 InternalError with the storage's error, as this is mapped.)
inline Status SqliteError(sqlite3* db, std::string_view what) {
  if (sqlite3_errcode(db) == SQLITE_FULL) {
    return InternalError(
        fmt::format("the disk is full: nothing was written ({}: {}); free some space and try again",
                    what, sqlite3_errmsg(db)));
  }
  return InternalError(fmt::format("sqlite: {}: {}", what, sqlite3_errmsg(db)));
}

// A use of a prepared statement. Statements are prepared once per store and
// kept (see SqliteStore::Prepared); a use resets and unbinds it when done.
class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt, int prepare_rc)
      : db_(db), stmt_(stmt), rc_(prepare_rc) {}
  ~Statement() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int i, const std::string& text) {
    if (rc_ == SQLITE_OK)
      rc_ =
          sqlite3_bind_text(stmt_, i, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, int64_t value) {
    if (rc_ == SQLITE_OK) rc_ = sqlite3_bind_int64(stmt_, i, value);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step() {
    if (rc_ != SQLITE_OK && rc_ != SQLITE_ROW && rc_ != SQLITE_DONE) return rc_;
    rc_ = sqlite3_step(stmt_);
    return rc_;
  }
  std::string Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    return p == nullptr ? std::string()
                        : std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  Status Error(std::string_view what) const { return SqliteError(db_, what); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  int rc_;
};

}  // namespace trainyard::store
