// The committed objects of a SQLite store's file, read by a process beside
// the one that owns it (WAL lets it): `trainyard exec`, run inside a
// replica, finds pods this way without opening the store for writing or
// reaching the API. Each read opens the file read-only, so it sees what the
// owner has committed, never what it has not.
#pragma once

#include <string>

#include "store/object_store.h"

namespace trainyard::store {

class SqliteFileReader final : public ObjectReader {
 public:
  explicit SqliteFileReader(std::string path) : path_(std::move(path)) {}

  // NOT_FOUND when the file or the object is absent.
  Result<api::Json> Get(const ObjectKey& key) const override;
  Result<ListResult> List(const std::string& kind, const std::string& namespace_) const override;
  Status Scan(const std::string& kind, const std::string& namespace_,
              const std::function<void(const api::Json&)>& visit) const override;
  // The file keeps no owner index: this reads every object of `kind`.
  Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                     const std::function<void(const api::Json&)>& visit) const override;
  // 0 when the file cannot be read.
  int64_t CurrentResourceVersion() const override;

 private:
  std::string path_;
};

}  // namespace trainyard::store
