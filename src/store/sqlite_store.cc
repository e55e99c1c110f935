#include "store/sqlite_store.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "api/json.h"
#include "api/registry.h"
#include "store/sqlite_statement.h"

namespace trainyard::store {

namespace {

// Old events are pruned once per kPruneEvery writes rather than on each.
constexpr int64_t kPruneEvery = 256;

std::string RandomUuid() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  uint64_t hi = gen();
  uint64_t lo = gen();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // RFC 4122 variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xffff,
                     hi & 0xffff, lo >> 48, lo & 0xffffffffffffULL);
}

const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS objects (
  kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL,
  resource_version INTEGER NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (kind, namespace, name));
CREATE TABLE IF NOT EXISTS events (
  resource_version INTEGER PRIMARY KEY, type INTEGER NOT NULL, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS observations (
  trial TEXT NOT NULL, seq INTEGER NOT NULL, time_us INTEGER NOT NULL,
  metric TEXT NOT NULL, value TEXT NOT NULL,
  step INTEGER NOT NULL DEFAULT -9223372036854775808,
  idx INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (trial, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS observation_series (
  trial TEXT NOT NULL, metric TEXT NOT NULL, body TEXT NOT NULL,
  PRIMARY KEY (trial, metric)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS observation_sources (
  source TEXT PRIMARY KEY, trial TEXT NOT NULL, read_to INTEGER NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO counters VALUES ('resource_version', 0);
)";

api::Json& Meta(api::Json& object) {
  if (!object["metadata"].is_object()) object["metadata"] = api::Json::object();
  return object["metadata"];
}

std::string StoredVersion(const api::Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto rv = meta->find("resourceVersion");
  return rv != meta->end() && rv->is_string() ? rv->get<std::string>() : "";
}

Status Conflict(const ObjectKey& key) {
  return Status(StatusCode::kAborted,
                fmt::format("Operation cannot be fulfilled on {}: the object has been modified; "
                            "please apply your changes to the latest version and try again",
                            key.ToString()));
}

// Whether two objects differ only in what the store maintains (their
// resourceVersion): a write of `a` over `b` would change nothing. Compares
// in place, without copying either.
bool SameButVersion(const api::Json& a, const api::Json& b) {
  if (!a.is_object() || !b.is_object() || a.size() != b.size()) return a == b;
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto other = b.find(it.key());
    if (other == b.end()) return false;
    if (it.key() != "metadata" || !it->is_object() || !other->is_object()) {
      if (*it != *other) return false;
      continue;
    }
    const api::Json& ma = *it;
    const api::Json& mb = *other;
    size_t skipped = 0;
    for (auto field = ma.begin(); field != ma.end(); ++field) {
      if (field.key() == "resourceVersion") {
        ++skipped;
        continue;
      }
      auto theirs = mb.find(field.key());
      if (theirs == mb.end() || *field != *theirs) return false;
    }
    if (ma.size() - skipped != mb.size() - mb.count("resourceVersion")) return false;
  }
  return true;
}

}  // namespace

// The uids an object's ownerReferences name.
std::vector<std::string> OwnerUidsOf(const api::Json& object) {
  std::vector<std::string> uids;
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return uids;
  auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return uids;
  for (const api::Json& ref : *refs) {
    auto uid = ref.is_object() ? ref.find("uid") : ref.end();
    if (uid != ref.end() && uid->is_string()) uids.push_back(uid->get<std::string>());
  }
  return uids;
}

std::string ObjectKey::ToString() const {
  return namespace_.empty() ? fmt::format("{} {}", kind, name)
                            : fmt::format("{} {}/{}", kind, namespace_, name);
}

Result<ObjectKey> KeyOf(const api::Json& object) {
  if (!object.is_object()) return InvalidArgumentError("an object must be a JSON object");
  ObjectKey key;
  key.kind = api::StoreKindOf(object);
  auto meta = object.find("metadata");
  if (meta != object.end() && meta->is_object()) {
    key.namespace_ = api::StringAt(*meta, "namespace");
    key.name = api::StringAt(*meta, "name");
  }
  if (key.kind.empty()) return InvalidArgumentError("kind: Required value");
  if (key.name.empty()) return InvalidArgumentError("metadata.name: Required value");
  return key;
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(SqliteStoreOptions options) {
  if (!options.new_uid) options.new_uid = RandomUuid;
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(options)));
  // No other thread has it yet; the analysis asks for the lock all the same.
  MutexLock lock(store->mu_);
  RETURN_IF_ERROR(store->Init());
  return store;
}

SqliteStore::~SqliteStore() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Statement SqliteStore::Prepare(const char* sql) const {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return Statement(db_, it->second, SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr);
  if (rc == SQLITE_OK) statements_.emplace(sql, stmt);
  return Statement(db_, stmt, rc);
}

Status SqliteStore::Exec(const char* sql) const {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) return SqliteError(db_, sql);
  return OkStatus();
}

Status SqliteStore::Run(const char* sql) const {
  Statement st = Prepare(sql);
  if (st.Step() != SQLITE_DONE) return st.Error(sql);
  return OkStatus();
}

Status SqliteStore::Init() {
  bool in_memory = options_.path == ":memory:";
  // Marks a store being made, from before its file exists until its schema
  // is on disk: an empty file without it was truncated.
  std::string fresh = options_.path + ".new";
  std::error_code ec;
  if (!in_memory && !std::filesystem::exists(options_.path, ec)) std::ofstream{fresh};
  if (!in_memory) RETURN_IF_ERROR(CheckNotTruncated(fresh));
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(options_.path.c_str(), &db_, flags,
                      options_.vfs.empty() ? nullptr : options_.vfs.c_str()) != SQLITE_OK) {
    return UnavailableError(fmt::format("cannot open store {}: {}", options_.path,
                                        db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory"));
  }
  sqlite3_busy_timeout(db_, 5000);
  // WAL lets readers run beside the writer; FULL syncs the log at every
  // commit, so an acknowledged write survives a crash or power loss.
  RETURN_IF_ERROR(Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"));
  RETURN_IF_ERROR(Exec(kSchema));
  RETURN_IF_ERROR(AddStepColumn());
  RETURN_IF_ERROR(MigrateObservations());
  if (!in_memory) std::filesystem::remove(fresh, ec);
  RETURN_IF_ERROR(RepairCounter());
  return LoadCommitted();
}

Status SqliteStore::AddStepColumn() {
  const char* sql = "SELECT COUNT(*) FROM pragma_table_info('observations') WHERE name = 'step'";
  Statement st = Prepare(sql);
  if (st.Step() != SQLITE_ROW) return st.Error(sql);
  if (st.Int(0) > 0) return OkStatus();
  return Exec(
      "ALTER TABLE observations ADD COLUMN step INTEGER NOT NULL DEFAULT -9223372036854775808");
}

Status SqliteStore::CheckNotTruncated(const std::string& fresh) const {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(options_.path, ec);
  if (ec || size > 0 || std::filesystem::exists(fresh, ec)) return OkStatus();
  return FailedPreconditionError(fmt::format(
      "store {} is empty (0 bytes) but was not just created: it has been truncated, and opening "
      "it would start an empty cluster; restore it from a backup, or remove it to start afresh",
      options_.path));
}

Status SqliteStore::RepairCounter() {
  Statement st = Prepare(
      "SELECT (SELECT value FROM counters WHERE name = 'resource_version'), "
      "MAX((SELECT IFNULL(MAX(resource_version), 0) FROM objects), "
      "(SELECT IFNULL(MAX(resource_version), 0) FROM events))");
  if (st.Step() != SQLITE_ROW) return st.Error("read resource versions");
  int64_t counter = st.Int(0);
  int64_t stored = st.Int(1);
  if (counter >= stored) return OkStatus();
  Statement set = Prepare("UPDATE counters SET value = ? WHERE name = 'resource_version'");
  set.Bind(1, stored);
  if (set.Step() != SQLITE_DONE) return set.Error("repair the resource version counter");
  options_.log->Warning(
      "trainyard: store {}: the resource version counter ({}) was behind the versions stored "
      "(up to {}); it now continues from {}",
      options_.path, counter, stored, stored);
  return OkStatus();
}

Status SqliteStore::LoadCommitted() {
  Statement st = Prepare("SELECT value FROM counters WHERE name = 'resource_version'");
  if (st.Step() != SQLITE_ROW) return st.Error("read resource version");
  int64_t rv = st.Int(0);
  std::map<Slot, api::Json> objects;
  Statement all = Prepare("SELECT kind, namespace, name, body FROM objects");
  int rc;
  while ((rc = all.Step()) == SQLITE_ROW) {
    ObjectKey key{all.Text(0), all.Text(1), all.Text(2)};
    api::Json body = api::Json::parse(all.Text(3), nullptr, /*allow_exceptions=*/false);
    if (body.is_discarded() || !body.is_object()) {
      return FailedPreconditionError(fmt::format(
          "store {}: the stored {} is not a JSON object; restore the store from a backup, or "
          "delete that row (kind {}, namespace '{}', name {}) with sqlite3",
          options_.path, key.ToString(), key.kind, key.namespace_, key.name));
    }
    objects[{std::move(key.kind), std::move(key.namespace_), std::move(key.name)}] =
        std::move(body);
  }
  if (rc != SQLITE_DONE) return all.Error("load objects");
  objects_.swap(objects);
  owned_.clear();
  terms_.clear();
  for (const auto& [slot, object] : objects_) {
    IndexOwners(slot, object, /*add=*/true);
    IndexTerms(slot, object, /*add=*/true);
  }
  rv_ = rv;
  committed_rv_ = rv;
  reload_needed_ = false;
  ClearGroupImages();
  return OkStatus();
}

void SqliteStore::ClearGroupImages() {
  group_before_.clear();
  group_events_.clear();
  group_first_seq_.clear();
  group_series_before_.clear();
}

void SqliteStore::AwaitCommit() const {
  commit_done_.Wait(mu_, [&]() TRAINYARD_REQUIRES(mu_) { return !committing_; });
}

Status SqliteStore::ReloadIfNeeded() { return reload_needed_ ? LoadCommitted() : OkStatus(); }

Status SqliteStore::BeginGroup() {
  MutexLock lock(mu_);
  AwaitCommit();
  if (in_group_) return FailedPreconditionError("a write group is already open");
  RETURN_IF_ERROR(ReloadIfNeeded());
  RETURN_IF_ERROR(Run("BEGIN IMMEDIATE"));
  in_group_ = true;
  return OkStatus();
}

Status SqliteStore::CommitGroup() {
  MutexLock lock(mu_);
  AwaitCommit();
  if (!in_group_) return OkStatus();
  // The commit's fsync is made without the lock: reads from memory go on
  // meanwhile, as of the last commit (group_before_ is kept until the
  // end); whatever would use the database waits for it (AwaitCommit).
  Status committed = OkStatus();
  {
    Statement commit = Prepare("COMMIT");
    committing_ = true;
    lock.Unlock();
    int rc = commit.Step();
    lock.Lock();
    committing_ = false;
    commit_done_.NotifyAll();
    if (rc != SQLITE_DONE) committed = commit.Error("COMMIT");
  }  // the statement is reset here, before a ROLLBACK may be needed
  in_group_ = false;
  if (committed.ok()) {
    // The group's changes reach the committed watchers now, from the
    // events the group recorded.
    committed_rv_ = rv_;
    std::vector<SharedWatchEvent> events = std::move(group_events_);
    ClearGroupImages();
    if (!events.empty()) {
      for (const auto& [id, callback] : committed_watchers_) callback(events);
    }
    return OkStatus();
  }
  // Nothing of the group reached the disk: neither may it stay in memory.
  // (SQLite may have rolled back already; a second ROLLBACK is harmless.)
  // The group's before-images undo it in memory, without reading the disk
  // that just failed; only if the transaction is somehow still open is
  // memory loaded from the disk again, before the next write.
  (void)Exec("ROLLBACK");
  auto images = std::move(group_before_);
  for (auto& [slot, before] : images) Place(slot, std::move(before));
  rv_ = committed_rv_;
  ClearGroupImages();
  if (sqlite3_get_autocommit(db_) == 0) {
    reload_needed_ = true;
    (void)ReloadIfNeeded();  // if reading fails too, the next write tries again
  }
  return committed;
}

int64_t SqliteStore::CurrentResourceVersion() const {
  MutexLock lock(mu_);
  return rv_;
}

Result<std::optional<api::Json>> SqliteStore::Load(const ObjectKey& key) const {
  auto it = objects_.find({key.kind, key.namespace_, key.name});
  if (it == objects_.end()) return std::optional<api::Json>();
  return std::optional<api::Json>(it->second);
}

Status SqliteStore::Put(const ObjectKey& key, const std::string& body, int64_t rv) {
  Statement st = Prepare(
      "INSERT INTO objects (kind, namespace, name, resource_version, body) "
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (kind, namespace, name) DO UPDATE SET "
      "resource_version = excluded.resource_version, body = excluded.body");
  st.Bind(1, key.kind).Bind(2, key.namespace_).Bind(3, key.name).Bind(4, rv).Bind(5, body);
  if (st.Step() != SQLITE_DONE) return st.Error("store object");
  return OkStatus();
}

Status SqliteStore::Remove(const ObjectKey& key) {
  Statement st = Prepare("DELETE FROM objects WHERE kind = ? AND namespace = ? AND name = ?");
  st.Bind(1, key.kind).Bind(2, key.namespace_).Bind(3, key.name);
  if (st.Step() != SQLITE_DONE) return st.Error("delete");
  return OkStatus();
}

Result<api::Json> SqliteStore::Write(EventType type,
                                     const std::function<Result<api::Json>(int64_t)>& write) {
  MutexLock lock(mu_);
  AwaitCommit();
  RETURN_IF_ERROR(ReloadIfNeeded());
  // Inside a group, each write is a savepoint of the group's transaction:
  // a failed one undoes only itself, and the disk sees all at CommitGroup.
  int64_t rv = rv_ + 1;
  Result<api::Json> written = write(rv);
  if (!written.ok()) return written.status();
  // Nothing changed: no write, no event.
  if (StoredVersion(*written) != std::to_string(rv)) return written;
  ASSIGN_OR_RETURN(ObjectKey key, KeyOf(*written));
  RETURN_IF_ERROR(Run(in_group_ ? "SAVEPOINT write" : "BEGIN IMMEDIATE"));
  auto rollback = [&](Status s) TRAINYARD_REQUIRES(mu_) {
    (void)Exec(in_group_ ? "ROLLBACK TO write; RELEASE write" : "ROLLBACK");
    return s;
  };
  // One serialisation serves the object's row and its event's.
  std::string body = written->dump();
  if (Status s = type == EventType::kDeleted ? Remove(key) : Put(key, body, rv); !s.ok()) {
    return rollback(s);
  }
  Statement event = Prepare("INSERT INTO events (resource_version, type, body) VALUES (?, ?, ?)");
  event.Bind(1, rv).Bind(2, static_cast<int64_t>(type)).Bind(3, body);
  if (event.Step() != SQLITE_DONE) return rollback(event.Error("record event"));
  Statement counter = Prepare("UPDATE counters SET value = ? WHERE name = 'resource_version'");
  counter.Bind(1, rv);
  if (counter.Step() != SQLITE_DONE) return rollback(counter.Error("advance resource version"));
  if (rv % std::min(kPruneEvery, options_.kept_events) == 0) {
    Statement prune = Prepare("DELETE FROM events WHERE resource_version <= ?");
    // Never past the last commit: an open group's own events are what its
    // commit replays to committed watchers.
    prune.Bind(1, std::min(rv - options_.kept_events, committed_rv_));
    if (prune.Step() != SQLITE_DONE) return rollback(prune.Error("prune events"));
  }
  if (Status s = Run(in_group_ ? "RELEASE write" : "COMMIT"); !s.ok()) return rollback(s);
  rv_ = rv;
  Place({key.kind, key.namespace_, key.name},
        type == EventType::kDeleted ? std::nullopt : std::optional<api::Json>(*written));
  // The event takes the written object and hands it back: no copy.
  WatchEvent e{type, rv, std::move(*written)};
  for (const auto& [id, callback] : watchers_) callback(e);
  if (committed_watchers_.empty()) {
    if (!in_group_) committed_rv_ = rv;
    return std::move(e.object);
  }
  auto shared = std::make_shared<const WatchEvent>(
      WatchEvent{type, rv, e.object, std::make_shared<const std::string>(std::move(body))});
  if (in_group_) {
    // Told at the commit, as it is now: neither read back nor parsed.
    group_events_.push_back(std::move(shared));
  } else {
    committed_rv_ = rv;
    for (const auto& [id, callback] : committed_watchers_) callback({&shared, 1});
  }
  return std::move(e.object);
}

void SqliteStore::Place(const Slot& slot, std::optional<api::Json> object) {
  auto it = objects_.find(slot);
  if (in_group_ && !group_before_.contains(slot)) {
    group_before_.emplace(
        slot, it == objects_.end() ? std::nullopt : std::optional<api::Json>(it->second));
  }
  if (it != objects_.end()) {
    IndexOwners(slot, it->second, /*add=*/false);
    IndexTerms(it->first, it->second, /*add=*/false);
    if (!object) objects_.erase(it);
  }
  if (!object) return;
  IndexOwners(slot, *object, /*add=*/true);
  auto placed = objects_.insert_or_assign(slot, std::move(*object)).first;
  IndexTerms(placed->first, placed->second, /*add=*/true);
}

void SqliteStore::IndexOwners(const Slot& slot, const api::Json& object, bool add) {
  for (const std::string& uid : OwnerUidsOf(object)) {
    if (add) {
      owned_[uid].insert(slot);
      continue;
    }
    auto owner = owned_.find(uid);
    if (owner == owned_.end()) continue;
    owner->second.erase(slot);
    if (owner->second.empty()) owned_.erase(owner);
  }
}

Result<api::Json> SqliteStore::Create(api::Json object) {
  ASSIGN_OR_RETURN(ObjectKey key, KeyOf(object));
  return Write(EventType::kAdded, [&](int64_t rv) TRAINYARD_REQUIRES(mu_) -> Result<api::Json> {
    ASSIGN_OR_RETURN(std::optional<api::Json> existing, Load(key));
    if (existing) return AlreadyExistsError(fmt::format("{} already exists", key.ToString()));
    api::Json& meta = Meta(object);
    meta["uid"] = options_.new_uid();
    meta["resourceVersion"] = std::to_string(rv);
    meta["generation"] = 1;
    meta["creationTimestamp"] = FormatRfc3339(options_.clock->Now());
    if (options_.on_create) options_.on_create(object);
    return object;
  });
}

Result<api::Json> SqliteStore::Get(const ObjectKey& key) const {
  MutexLock lock(mu_);
  ASSIGN_OR_RETURN(std::optional<api::Json> object, Load(key));
  if (!object) return NotFoundError(fmt::format("{} not found", key.ToString()));
  return *object;
}

Status SqliteStore::Scan(const std::string& kind, const std::string& namespace_,
                         const std::function<void(const api::Json&)>& visit) const {
  MutexLock lock(mu_);
  ScanLocked(kind, namespace_, visit);
  return OkStatus();
}

void SqliteStore::ScanLocked(const std::string& kind, const std::string& namespace_,
                             const std::function<void(const api::Json&)>& visit) const {
  for (auto it = objects_.lower_bound({kind, namespace_, ""});
       it != objects_.end() && std::get<0>(it->first) == kind; ++it) {
    if (!namespace_.empty() && std::get<1>(it->first) != namespace_) break;
    visit(it->second);
  }
}

Status SqliteStore::ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                                const std::function<void(const api::Json&)>& visit) const {
  MutexLock lock(mu_);
  auto owner = owned_.find(owner_uid);
  if (owner == owned_.end()) return OkStatus();
  for (auto it = owner->second.lower_bound({kind, "", ""});
       it != owner->second.end() && std::get<0>(*it) == kind; ++it) {
    visit(objects_.at(*it));
  }
  return OkStatus();
}

Result<ObjectStore::ListResult> SqliteStore::List(const std::string& kind,
                                                  const std::string& namespace_) const {
  MutexLock lock(mu_);
  ListResult result;
  result.resource_version = rv_;
  ScanLocked(kind, namespace_, [&](const api::Json& o) { result.items.push_back(o); });
  return result;
}

Result<api::Json> SqliteStore::LoadForUpdate(const ObjectKey& key, const api::Json& update) const {
  ASSIGN_OR_RETURN(std::optional<api::Json> stored, Load(key));
  if (!stored) return NotFoundError(fmt::format("{} not found", key.ToString()));
  std::string expected = StoredVersion(update);
  if (!expected.empty() && expected != StoredVersion(*stored)) return Conflict(key);
  return *stored;
}

Result<api::Json> SqliteStore::Update(api::Json object) {
  ASSIGN_OR_RETURN(ObjectKey key, KeyOf(object));
  return Write(EventType::kModified, [&](int64_t rv) TRAINYARD_REQUIRES(mu_) -> Result<api::Json> {
    ASSIGN_OR_RETURN(api::Json stored, LoadForUpdate(key, object));
    // What the store maintains comes from the stored object, whatever the
    // caller sent; the status changes only through UpdateStatus. (The status
    // goes in first: ordered_json keeps keys in a vector, so inserting one
    // would invalidate a reference to "metadata" taken before.)
    object.erase("status");
    if (stored.contains("status")) object["status"] = stored["status"];
    api::Json& meta = Meta(object);
    const api::Json& old_meta = stored["metadata"];
    for (const char* field : {"uid", "creationTimestamp", "generation"}) {
      if (old_meta.contains(field)) meta[field] = old_meta[field];
    }
    if (api::ValueAt(object, "spec") != api::ValueAt(stored, "spec")) {
      meta["generation"] = api::IntAt(old_meta, "generation") + 1;
    }
    if (SameButVersion(object, stored)) return stored;  // no change
    meta["resourceVersion"] = std::to_string(rv);
    return object;
  });
}

Result<api::Json> SqliteStore::UpdateStatus(api::Json object) {
  ASSIGN_OR_RETURN(ObjectKey key, KeyOf(object));
  return Write(EventType::kModified, [&](int64_t rv) TRAINYARD_REQUIRES(mu_) -> Result<api::Json> {
    ASSIGN_OR_RETURN(api::Json stored, LoadForUpdate(key, object));
    auto old_status = stored.find("status");
    auto new_status = object.find("status");
    bool had = old_status != stored.end();
    bool has = new_status != object.end();
    if (had == has && (!has || *old_status == *new_status)) return stored;  // no change
    stored.erase("status");
    if (has) stored["status"] = std::move(*new_status);
    Meta(stored)["resourceVersion"] = std::to_string(rv);
    return stored;
  });
}

Result<api::Json> SqliteStore::Delete(const ObjectKey& key) {
  return Write(EventType::kDeleted, [&](int64_t rv) TRAINYARD_REQUIRES(mu_) -> Result<api::Json> {
    ASSIGN_OR_RETURN(std::optional<api::Json> stored, Load(key));
    if (!stored) return NotFoundError(fmt::format("{} not found", key.ToString()));
    Meta(*stored)["resourceVersion"] = std::to_string(rv);
    return *stored;
  });
}

Status SqliteStore::Replay(int64_t since, int64_t upto,
                           const std::function<void(WatchEvent&&)>& callback) const {
  if (since >= upto) return OkStatus();
  Statement oldest = Prepare("SELECT MIN(resource_version) FROM events");
  if (oldest.Step() != SQLITE_ROW) return oldest.Error("read events");
  int64_t first = oldest.Int(0);
  if (first == 0 || since + 1 < first) {
    return OutOfRangeError(fmt::format(
        "too old resource version: {} (the oldest kept is {}); list again", since, first - 1));
  }
  Statement st = Prepare(
      "SELECT resource_version, type, body FROM events "
      "WHERE resource_version > ? AND resource_version <= ? ORDER BY resource_version");
  st.Bind(1, since).Bind(2, upto);
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    auto text = std::make_shared<const std::string>(st.Text(2));
    callback({static_cast<EventType>(st.Int(1)), st.Int(0), api::Json::parse(*text), text});
  }
  if (rc != SQLITE_DONE) return st.Error("replay events");
  return OkStatus();
}

Result<WatchId> SqliteStore::Watch(int64_t since, WatchCallback callback) {
  MutexLock lock(mu_);
  AwaitCommit();
  if (since > 0) RETURN_IF_ERROR(Replay(since, rv_, [&](WatchEvent&& e) { callback(e); }));
  WatchId id = next_watch_++;
  watchers_.emplace(id, std::move(callback));
  return id;
}

Result<WatchId> SqliteStore::WatchCommitted(int64_t since, SharedWatchCallback callback) {
  MutexLock lock(mu_);
  AwaitCommit();
  // What an open group wrote comes at its commit, not now.
  if (since > 0) {
    std::vector<SharedWatchEvent> missed;
    RETURN_IF_ERROR(Replay(since, committed_rv_, [&](WatchEvent&& e) {
      missed.push_back(std::make_shared<const WatchEvent>(std::move(e)));
    }));
    if (!missed.empty()) callback(missed);
  }
  if (in_group_ && committed_watchers_.empty() && rv_ > committed_rv_) {
    // The open group's writes so far were kept for nobody (StopWatch let
    // go of those kept for a watcher since gone): from the disk, to be
    // told at its commit with the rest.
    std::vector<SharedWatchEvent> written;
    RETURN_IF_ERROR(Replay(committed_rv_, rv_, [&](WatchEvent&& e) {
      written.push_back(std::make_shared<const WatchEvent>(std::move(e)));
    }));
    group_events_ = std::move(written);
  }
  WatchId id = next_watch_++;
  committed_watchers_.emplace(id, std::move(callback));
  return id;
}

void SqliteStore::StopWatch(WatchId id) {
  MutexLock lock(mu_);
  watchers_.erase(id);
  committed_watchers_.erase(id);
  // Kept only while someone watches: the next watcher reads them again.
  if (committed_watchers_.empty()) group_events_.clear();
}

}  // namespace trainyard::store
