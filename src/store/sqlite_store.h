// The ObjectStore on SQLite: one file under $TRAINYARD_HOME, WAL mode,
// synchronous=FULL, so a write that returned is on disk. ":memory:" gives a
// private in-memory store, for tests and one-shot runs.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "store/committed_reader.h"
#include "store/control_store.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::store {

class Statement;

struct SqliteStoreOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  std::string path = ":memory:";
  const Clock* clock = &RealClock::Get();
  // How many past changes a watch can at least resume from (pruning runs in
  // batches, so up to twice as many may be kept).
  int64_t kept_events = 10'000;
  // New object uids; a random UUID (v4) unless a test wants its own.
  std::function<std::string()> new_uid;
  // Applied to each object as it is created, once its uid is set: the
  // defaults kube-apiserver derives from it (a Job's selector).
  std::function<void(api::Json&)> on_create;
  // The SQLite VFS the file is opened with; empty: the default. (Tests
  // inject a full disk through their own.)
  std::string vfs;
};

// The uids an object's ownerReferences name.
std::vector<std::string> OwnerUidsOf(const api::Json& object);

class SqliteStore final : public GroupCommitStore {
 public:
  static Result<std::unique_ptr<SqliteStore>> Open(SqliteStoreOptions options);
  ~SqliteStore() override;

  Result<api::Json> Create(api::Json object) override;
  Result<api::Json> Get(const ObjectKey& key) const override;
  Result<ListResult> List(const std::string& kind, const std::string& namespace_) const override;
  Status Scan(const std::string& kind, const std::string& namespace_,
              const std::function<void(const api::Json&)>& visit) const override;
  Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                     const std::function<void(const api::Json&)>& visit) const override;
  Result<int64_t> ScanWhere(const ListQuery& query,
                            const std::function<bool(const api::Json&)>& visit) const override;
  // How many objects ScanWhere has read (of either view) since the store
  // opened, matching or not: what shows that a list used an index.
  int64_t objects_examined() const { return examined_.load(std::memory_order_relaxed); }
  Result<api::Json> Update(api::Json object) override;
  Result<api::Json> UpdateStatus(api::Json object) override;
  Result<api::Json> Delete(const ObjectKey& key) override;
  // Callbacks run in the writing thread, under the store's lock and in
  // resourceVersion order: they must be quick and must not call the store
  // (hand the event to a queue).
  Result<WatchId> Watch(int64_t since, WatchCallback callback) override;
  // As Watch, but each change reaches `callback` only once it is durable:
  // a write in a group at CommitGroup, in order. For what is shown to API
  // clients, who must never see a resourceVersion a crash could take back.
  // Every committed watcher gets the same shared event.
  Result<WatchId> WatchCommitted(int64_t since, SharedWatchCallback callback);
  void StopWatch(WatchId id) override;
  int64_t CurrentResourceVersion() const override;

  // An open group's writes are not in it until CommitGroup; reads from it
  // take the same lock as writes, and see each object as of the last
  // commit.
  CommittedReader& committed() override { return committed_view_; }

  // A group is one SQLite transaction, so one fsync makes its writes
  // durable. The engine wraps each loop step in a group.
  Status BeginGroup() override;
  Status CommitGroup() override;

  Status AppendObservations(const std::string& trial, const std::vector<ObservationRow>& rows,
                            const std::string& source, int64_t read_to) override;
  Result<int64_t> ObservationsReadTo(const std::string& source) const override;
  using ObservationLog::ListObservations;
  Result<ObservationPage> ListObservations(const std::string& trial,
                                           const ObservationQuery& query) const override;
  Result<ObservationSummary> SummarizeObservations(const std::string& trial) const override;
  Status DeleteObservations(const std::string& trial) override;

 private:
  // An object's place in objects_: kind, namespace, name.
  using Slot = std::tuple<std::string, std::string, std::string>;
  // Slots by what they point to: an index holds pointers to objects_'s
  // keys, which stay where they are while their object is stored.
  struct SlotLess {
    bool operator()(const Slot* a, const Slot* b) const { return *a < *b; }
  };
  using SlotSet = std::set<const Slot*, SlotLess>;

  class CommittedView final : public CommittedReader {
   public:
    explicit CommittedView(SqliteStore& store) : store_(store) {}
    Result<api::Json> Get(const ObjectKey& key) const override;
    Result<ListResult> List(const std::string& kind, const std::string& namespace_) const override;
    Status Scan(const std::string& kind, const std::string& namespace_,
                const std::function<void(const api::Json&)>& visit) const override;
    Status ScanOwnedBy(const std::string& kind, const std::string& owner_uid,
                       const std::function<void(const api::Json&)>& visit) const override;
    Result<int64_t> ScanWhere(const ListQuery& query,
                              const std::function<bool(const api::Json&)>& visit) const override;
    int64_t CurrentResourceVersion() const override;
    Result<WatchId> WatchCommitted(int64_t since, SharedWatchCallback callback) override {
      return store_.WatchCommitted(since, std::move(callback));
    }
    void StopWatch(WatchId id) override { store_.StopWatch(id); }
    using CommittedReader::ListObservations;
    Result<ObservationPage> ListObservations(const std::string& trial,
                                             const ObservationQuery& query) const override;
    Result<ObservationSummary> SummarizeObservations(const std::string& trial) const override;

   private:
    SqliteStore& store_;
  };

  explicit SqliteStore(SqliteStoreOptions options) : options_(std::move(options)) {}
  // Puts `object` into objects_ at `slot` (nullopt: removes what is
  // there), keeping owned_ in step.
  void Place(const Slot& slot, std::optional<api::Json> object) TRAINYARD_REQUIRES(mu_);
  void IndexOwners(const Slot& slot, const api::Json& object, bool add) TRAINYARD_REQUIRES(mu_);
  // Adds `object`'s index terms for `slot` (a key of objects_), or takes
  // them away (sqlite_index.cc).
  void IndexTerms(const Slot& slot, const api::Json& object, bool add) TRAINYARD_REQUIRES(mu_);
  static std::vector<std::string> TermsOf(const api::Json& object);
  // The shortest index list among `query`'s indexed equalities; nullptr
  // when it has none (then the range is read).
  const SlotSet* SmallestPosting(const ListQuery& query) const TRAINYARD_REQUIRES(mu_);
  static std::optional<Slot> NamedSlot(const ListQuery& query);
  // ScanWhere of the store as it is, or (`committed`) as of the last commit.
  void ScanWhereLocked(ListQuery query, bool committed,
                       const std::function<bool(const api::Json&)>& visit) const
      TRAINYARD_REQUIRES(mu_);
  Status Init() TRAINYARD_REQUIRES(mu_);
  // Until no commit is under way: what uses the database calls it first.
  void AwaitCommit() const TRAINYARD_REQUIRES(mu_);
  // A store made before observations had steps gets the column, every
  // value it holds without one (kNoStep).
  Status AddStepColumn() TRAINYARD_REQUIRES(mu_);
  // Refuses a store file that is empty although this store did not just
  // create it (it was truncated): it would otherwise open as an empty
  // cluster. `fresh` is the marker file kept while a new store is made.
  Status CheckNotTruncated(const std::string& fresh) const;
  // Moves the resource-version counter up to the highest version stored
  // (of an object or an event), if it is behind: every write would
  // otherwise fail on the events' unique key.
  Status RepairCounter() TRAINYARD_REQUIRES(mu_);
  // rv_ and objects_ as committed on disk; neither changes if it fails.
  Status LoadCommitted() TRAINYARD_REQUIRES(mu_);
  // After a failed commit, memory is loaded again from the disk; until
  // that has worked, no write is taken.
  Status ReloadIfNeeded() TRAINYARD_REQUIRES(mu_);
  // Calls `callback` for the stored events after `since`, up to `upto`;
  // OUT_OF_RANGE when `since` is older than the oldest kept.
  Status Replay(int64_t since, int64_t upto,
                const std::function<void(WatchEvent&&)>& callback) const TRAINYARD_REQUIRES(mu_);
  void ScanLocked(const std::string& kind, const std::string& namespace_,
                  const std::function<void(const api::Json&)>& visit) const TRAINYARD_REQUIRES(mu_);
  // The committed object at `slot`: the open group's before-image where the
  // group wrote it; nullptr when there was none.
  const api::Json* CommittedAt(const Slot& slot) const TRAINYARD_REQUIRES(mu_);
  void ScanCommittedLocked(const std::string& kind, const std::string& namespace_,
                           const std::function<void(const api::Json&)>& visit) const
      TRAINYARD_REQUIRES(mu_);
  // A page of `trial`'s rows appended before `before_seq`, with the last
  // value of each of `summary`'s thinned metrics where it was not kept.
  Result<ObservationPage> ListObservationsLocked(const std::string& trial,
                                                 const ObservationQuery& query, int64_t before_seq,
                                                 const ObservationSummary& summary) const
      TRAINYARD_REQUIRES(mu_);
  // The stored summaries of `trial`'s metrics, by metric.
  Result<std::map<std::string, std::string>> SeriesBodiesLocked(const std::string& trial) const
      TRAINYARD_REQUIRES(mu_);
  static ObservationSummary SummaryOf(const std::map<std::string, std::string>& bodies);
  // `bodies` as committed: the open group's before-images put back.
  ObservationSummary CommittedSummaryLocked(const std::string& trial,
                                            std::map<std::string, std::string> bodies) const
      TRAINYARD_REQUIRES(mu_);
  Status PutSeriesLocked(const std::string& trial, const ObservationSeries& series)
      TRAINYARD_REQUIRES(mu_);
  // Appends `rows`, kept as observation_series.h decides, in the open
  // transaction.
  Status AppendRowsLocked(const std::string& trial, const std::vector<ObservationRow>& rows)
      TRAINYARD_REQUIRES(mu_);
  // A store from before logs were bounded: its values get their places,
  // its logs their summaries, and long ones are thinned.
  Status MigrateObservations() TRAINYARD_REQUIRES(mu_);
  // Forgets what the open group wrote (at its commit, or once memory is
  // loaded from the disk again).
  void ClearGroupImages() TRAINYARD_REQUIRES(mu_);

  // Computes a change with `write` and, unless it is a no-op, stores it and
  // its event in one transaction, then tells watchers. `write` gets the new
  // resourceVersion and returns the object at it (for a delete, the object
  // removed), or the stored object unchanged to write nothing.
  Result<api::Json> Write(EventType type, const std::function<Result<api::Json>(int64_t)>& write);
  Result<std::optional<api::Json>> Load(const ObjectKey& key) const TRAINYARD_REQUIRES(mu_);
  // The stored object an update applies to: NOT_FOUND when there is none,
  // ABORTED when the update carries a resourceVersion that is not current.
  Result<api::Json> LoadForUpdate(const ObjectKey& key, const api::Json& update) const
      TRAINYARD_REQUIRES(mu_);
  // Runs `body` in a transaction of its own, or in the open group's.
  Status InTransaction(const std::function<Status()>& body) TRAINYARD_REQUIRES(mu_);
  Status Put(const ObjectKey& key, const std::string& body, int64_t rv) TRAINYARD_REQUIRES(mu_);
  Status Remove(const ObjectKey& key) TRAINYARD_REQUIRES(mu_);
  Status Exec(const char* sql) const TRAINYARD_REQUIRES(mu_);
  // One statement, prepared once and kept: for the statements of every
  // write, which Exec would parse each time.
  Status Run(const char* sql) const TRAINYARD_REQUIRES(mu_);
  // The statement for `sql`, prepared on first use and kept.
  Statement Prepare(const char* sql) const TRAINYARD_REQUIRES(mu_);

  SqliteStoreOptions options_;
  sqlite3* db_ = nullptr;
  mutable Mutex mu_;  // guards everything below
  // Every current object, parsed, kept in step with each committed write, so
  // that reads never go to SQLite or parse JSON again. Ordered by kind,
  // namespace and name, so a List is one range.
  std::map<Slot, api::Json> objects_ TRAINYARD_GUARDED_BY(mu_);
  // The objects that name each uid in their ownerReferences.
  std::map<std::string, std::set<Slot>> owned_ TRAINYARD_GUARDED_BY(mu_);
  // The objects of each (kind, term): a label's key and value, or an
  // indexed field's value (sqlite_index.cc).
  std::map<std::pair<std::string, std::string>, SlotSet> terms_ TRAINYARD_GUARDED_BY(mu_);
  mutable std::atomic<int64_t> examined_{0};
  int64_t rv_ TRAINYARD_GUARDED_BY(mu_) = 0;
  int64_t committed_rv_ TRAINYARD_GUARDED_BY(mu_) = 0;  // rv_ as of the last commit
  std::map<WatchId, WatchCallback> watchers_ TRAINYARD_GUARDED_BY(mu_);
  std::map<WatchId, SharedWatchCallback> committed_watchers_ TRAINYARD_GUARDED_BY(mu_);
  // By SQL text.
  mutable std::map<std::string, sqlite3_stmt*> statements_ TRAINYARD_GUARDED_BY(mu_);
  WatchId next_watch_ TRAINYARD_GUARDED_BY(mu_) = 1;
  bool in_group_ TRAINYARD_GUARDED_BY(mu_) = false;
  // A group's COMMIT runs without mu_ (CommitGroup); this says so.
  bool committing_ TRAINYARD_GUARDED_BY(mu_) = false;
  mutable CondVar commit_done_;
  // Memory may hold writes the disk lost.
  bool reload_needed_ TRAINYARD_GUARDED_BY(mu_) = false;
  // What each object the open group wrote was at its last commit (nullopt:
  // it did not exist), and the first observation seq the group appended to
  // each trial: how committed reads see past the group.
  std::map<Slot, std::optional<api::Json>> group_before_ TRAINYARD_GUARDED_BY(mu_);
  std::map<std::string, int64_t> group_first_seq_ TRAINYARD_GUARDED_BY(mu_);
  // The open group's changes as committed watchers will get them at its
  // commit (none while nobody watches committed changes).
  std::vector<SharedWatchEvent> group_events_ TRAINYARD_GUARDED_BY(mu_);
  // Each log's series summaries before the open group first wrote them
  // (nullopt: the metric was new), by log and metric.
  std::map<std::string, std::map<std::string, std::optional<std::string>>> group_series_before_
      TRAINYARD_GUARDED_BY(mu_);
  CommittedView committed_view_{*this};
};

}  // namespace trainyard::store
