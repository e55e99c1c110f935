// SqliteStore's observation logs: one row per metric value, keyed by trial
// and sequence number, in the store's file and its transactions.
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace trainyard::store {

Status SqliteStore::InTransaction(const std::function<Status()>& body) {
  // Inside a group, a savepoint of the group's transaction: a body that
  // fails halfway undoes itself, and none of it is committed with the group.
  RETURN_IF_ERROR(Run(in_group_ ? "SAVEPOINT observations" : "BEGIN IMMEDIATE"));
  Status status = body();
  if (status.ok()) status = Run(in_group_ ? "RELEASE observations" : "COMMIT");
  if (!status.ok()) {
    (void)Exec(in_group_ ? "ROLLBACK TO observations; RELEASE observations" : "ROLLBACK");
  }
  return status;
}

Status SqliteStore::AppendObservations(const std::string& trial,
                                       const std::vector<ObservationRow>& rows,
                                       const std::string& source, int64_t read_to) {
  std::lock_guard lock(mu_);
  return InTransaction([&]() -> Status {
    const char* source_sql =
        "INSERT INTO observation_sources (source, trial, read_to) VALUES (?, ?, ?) "
        "ON CONFLICT (source) DO UPDATE SET read_to = excluded.read_to";
    if (!source.empty()) {
      Statement st = Prepare(source_sql);
      st.Bind(1, source).Bind(2, trial).Bind(3, read_to);
      if (st.Step() != SQLITE_DONE) return st.Error(source_sql);
    }
    const char* next_sql = "SELECT COALESCE(MAX(seq), -1) + 1 FROM observations WHERE trial = ?";
    int64_t seq = 0;
    {
      Statement next = Prepare(next_sql);
      next.Bind(1, trial);
      if (next.Step() != SQLITE_ROW) return next.Error(next_sql);
      seq = next.Int(0);
    }
    // Committed reads see none of what the open group appends.
    if (in_group_) group_first_seq_.emplace(trial, seq);
    const char* insert_sql =
        "INSERT INTO observations (trial, seq, time_us, metric, value, step) "
        "VALUES (?, ?, ?, ?, ?, ?)";
    for (const ObservationRow& row : rows) {
      Statement insert = Prepare(insert_sql);
      insert.Bind(1, trial)
          .Bind(2, seq++)
          .Bind(3, row.time_us)
          .Bind(4, row.metric)
          .Bind(5, row.value)
          .Bind(6, row.step);
      if (insert.Step() != SQLITE_DONE) return insert.Error(insert_sql);
    }
    return OkStatus();
  });
}

Result<std::vector<ObservationRow>> SqliteStore::ListObservations(const std::string& trial) const {
  std::lock_guard lock(mu_);
  return ListObservationsLocked(trial, INT64_MAX);
}

// Rows deleted by the open group are gone from this read at once, unlike
// objects: a trial's rows go only with the trial, in the same group.
Result<std::vector<ObservationRow>> SqliteStore::ListObservationsLocked(const std::string& trial,
                                                                        int64_t before_seq) const {
  const char* sql =
      "SELECT time_us, metric, value, step FROM observations WHERE trial = ? AND seq < ? "
      "ORDER BY seq";
  Statement st = Prepare(sql);
  st.Bind(1, trial).Bind(2, before_seq);
  std::vector<ObservationRow> rows;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    rows.push_back(
        {.time_us = st.Int(0), .metric = st.Text(1), .value = st.Text(2), .step = st.Int(3)});
  }
  if (rc != SQLITE_DONE) return st.Error(sql);
  return rows;
}

Result<int64_t> SqliteStore::ObservationsReadTo(const std::string& source) const {
  std::lock_guard lock(mu_);
  const char* sql = "SELECT read_to FROM observation_sources WHERE source = ?";
  Statement st = Prepare(sql);
  st.Bind(1, source);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return st.Int(0);
  if (rc != SQLITE_DONE) return st.Error(sql);
  return int64_t{0};
}

Status SqliteStore::DeleteObservations(const std::string& trial) {
  std::lock_guard lock(mu_);
  return InTransaction([&]() -> Status {
    for (const char* sql : {"DELETE FROM observations WHERE trial = ?",
                            "DELETE FROM observation_sources WHERE trial = ?"}) {
      Statement st = Prepare(sql);
      st.Bind(1, trial);
      if (st.Step() != SQLITE_DONE) return st.Error(sql);
    }
    return OkStatus();
  });
}

}  // namespace trainyard::store
