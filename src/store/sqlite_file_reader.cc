#include "store/sqlite_file_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <memory>

#include "api/json.h"

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

// Runs `sql` with `params` bound in order, handing each row's first
// column to `row`.
Status Each(const std::string& path, const char* sql, const std::vector<std::string>& params,
            const std::function<void(sqlite3_stmt*)>& row) {
  ASSIGN_OR_RETURN(Db db, OpenReadOnly(path));
  sqlite3_stmt* raw = nullptr;
  sqlite3_prepare_v2(db.get(), sql, -1, &raw, nullptr);
  Query st(raw, &sqlite3_finalize);
  if (st == nullptr) return UnavailableError(fmt::format("cannot read {}", path));
  for (size_t i = 0; i < params.size(); ++i) {
    sqlite3_bind_text(st.get(), static_cast<int>(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
  }
  while (sqlite3_step(st.get()) == SQLITE_ROW) row(st.get());
  return OkStatus();
}

// Each stored body of `kind` (in `namespace_`, unless empty), parsed; one
// that is not JSON is passed over.
Status ScanBodies(const std::string& path, const std::string& kind, const std::string& namespace_,
                  const std::function<void(const api::Json&)>& visit) {
  const char* sql =
      namespace_.empty()
          ? "SELECT body FROM objects WHERE kind = ? ORDER BY namespace, name"
          : "SELECT body FROM objects WHERE kind = ? AND namespace = ? ORDER BY namespace, name";
  std::vector<std::string> params = {kind};
  if (!namespace_.empty()) params.push_back(namespace_);
  return Each(path, sql, params, [&](sqlite3_stmt* st) {
    api::Json doc = api::Json::parse(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)),
                                     nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) visit(doc);
  });
}

}  // namespace

Result<api::Json> SqliteFileReader::Get(const ObjectKey& key) const {
  Result<api::Json> out = NotFoundError(fmt::format("{} not found in {}", key.ToString(), path_));
  RETURN_IF_ERROR(Each(
      path_, "SELECT body FROM objects WHERE kind = ? AND namespace = ? AND name = ?",
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
  ListResult list;
  list.resource_version = CurrentResourceVersion();
  RETURN_IF_ERROR(ScanBodies(path_, kind, namespace_,
                             [&](const api::Json& doc) { list.items.push_back(doc); }));
  return list;
}

Status SqliteFileReader::Scan(const std::string& kind, const std::string& namespace_,
                              const std::function<void(const api::Json&)>& visit) const {
  return ScanBodies(path_, kind, namespace_, visit);
}

Status SqliteFileReader::ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                                     const std::function<void(const api::Json&)>& visit) const {
  return ScanBodies(path_, kind, "", [&](const api::Json& doc) {
    for (const api::Json& ref : api::ArrayRefAt(doc, {"metadata", "ownerReferences"})) {
      if (api::StringAt(ref, "uid") == owner_uid) {
        visit(doc);
        return;
      }
    }
  });
}

int64_t SqliteFileReader::CurrentResourceVersion() const {
  int64_t rv = 0;
  (void)Each(path_, "SELECT value FROM counters WHERE name = 'resource_version'", {},
             [&](sqlite3_stmt* st) { rv = sqlite3_column_int64(st, 0); });
  return rv;
}

}  // namespace trainyard::store
