#include "store/sqlite_file_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "api/json.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

using Db = std::unique_ptr<sqlite3, decltype(&sqlite3_close)>;
using Query = std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)>;

Result<Db> OpenReadOnly(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return NotFoundError(fmt::format("no store at {}", path));
  }
  sqlite3_busy_timeout(db, 5000);  // the owner's commit in progress
  return Db(db, &sqlite3_close);
}

// Runs `sql` with `params` bound in order, handing each row to `row`. A
// read that stops short (the file busy past the timeout, or damaged) is an
// error, never fewer rows.
Status Each(sqlite3* db, const char* sql, const std::vector<std::string>& params,
            const std::function<void(sqlite3_stmt*)>& row) {
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &raw, nullptr) != SQLITE_OK) return SqliteError(db, sql);
  Query st(raw, &sqlite3_finalize);
  for (size_t i = 0; i < params.size(); ++i) {
    sqlite3_bind_text(st.get(), static_cast<int>(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
  }
  int code = SQLITE_ROW;
  while ((code = sqlite3_step(st.get())) == SQLITE_ROW) row(st.get());
  if (code != SQLITE_DONE) return SqliteError(db, sql);
  return OkStatus();
}

// Each stored body of `kind` (in `namespace_`, unless empty), parsed; one
// that is not JSON is passed over.
Status ScanBodies(sqlite3* db, const std::string& kind, const std::string& namespace_,
                  const std::function<void(const api::Json&)>& visit) {
  const char* sql =
      namespace_.empty()
          ? "SELECT body FROM objects WHERE kind = ? ORDER BY namespace, name"
          : "SELECT body FROM objects WHERE kind = ? AND namespace = ? ORDER BY namespace, name";
  std::vector<std::string> params = {kind};
  if (!namespace_.empty()) params.push_back(namespace_);
  return Each(db, sql, params, [&](sqlite3_stmt* st) {
    api::Json doc = api::Json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                                     nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) visit(doc);
  });
}

Result<int64_t> ResourceVersionIn(sqlite3* db) {
  int64_t rv = 0;
  RETURN_IF_ERROR(Each(db, "SELECT value FROM counters WHERE name = 'resource_version'", {},
                       [&](sqlite3_stmt* st) { rv = sqlite3_column_int64(st, 0); }));
  return rv;
}

}  // namespace

Result<api::Json> SqliteFileReader::Get(const ObjectKey& key) const {
  ASSIGN_OR_RETURN(Db db, OpenReadOnly(path_));
  Result<api::Json> out = NotFoundError(fmt::format("{} not found in {}", key.ToString(), path_));
  RETURN_IF_ERROR(Each(
      db.get(), "SELECT body FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
      {key.kind, key.namespace_, key.name}, [&](sqlite3_stmt* st) {
        out = api::Json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), nullptr,
                               /*allow_exceptions=*/false);
        if (out->is_discarded()) {
          out = FailedPreconditionError(
              fmt::format("the stored {} in {} is not JSON", key.ToString(), path_));
        }
      }));
  return out;
}

Result<ObjectReader::ListResult> SqliteFileReader::List(const std::string& kind,
                                                        const std::string& namespace_) const {
  ASSIGN_OR_RETURN(Db db, OpenReadOnly(path_));
  // One read transaction: the items as of the resourceVersion given.
  RETURN_IF_ERROR(Each(db.get(), "BEGIN", {}, [](sqlite3_stmt*) {}));
  ListResult list;
  ASSIGN_OR_RETURN(list.resource_version, ResourceVersionIn(db.get()));
  RETURN_IF_ERROR(ScanBodies(db.get(), kind, namespace_,
                             [&](const api::Json& doc) { list.items.push_back(doc); }));
  RETURN_IF_ERROR(Each(db.get(), "COMMIT", {}, [](sqlite3_stmt*) {}));
  return list;
}

Status SqliteFileReader::Scan(const std::string& kind, const std::string& namespace_,
                              const std::function<void(const api::Json&)>& visit) const {
  ASSIGN_OR_RETURN(Db db, OpenReadOnly(path_));
  return ScanBodies(db.get(), kind, namespace_, visit);
}

Status SqliteFileReader::ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                                     const std::function<void(const api::Json&)>& visit) const {
  ASSIGN_OR_RETURN(Db db, OpenReadOnly(path_));
  return ScanBodies(db.get(), kind, "", [&](const api::Json& doc) {
    std::vector<std::string> owners = OwnerUidsOf(doc);
    if (std::find(owners.begin(), owners.end(), owner_uid) != owners.end()) visit(doc);
  });
}

int64_t SqliteFileReader::CurrentResourceVersion() const {
  Result<Db> db = OpenReadOnly(path_);
  if (!db.ok()) return 0;
  Result<int64_t> rv = ResourceVersionIn(db->get());
  return rv.ok() ? *rv : 0;
}

}  // namespace trainyard::store
