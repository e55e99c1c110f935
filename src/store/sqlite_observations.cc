// SqliteStore's observation logs: one row per value kept, keyed by log and
// sequence number, and one summary per metric (observation_series.h), in
// the store's file and its transactions.
#include <algorithm>
#include <map>
#include <set>

#include "store/observation_series.h"
#include "store/sqlite_statement.h"
#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

// The series row that counts a log's values of metrics past its bound.
constexpr const char* kDroppedSeries = "";

}  // namespace

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

Result<std::map<std::string, std::string>> SqliteStore::SeriesBodiesLocked(
    const std::string& trial) const {
  const char* sql = "SELECT metric, body FROM observation_series WHERE trial = ?";
  Statement st = Prepare(sql);
  st.Bind(1, trial);
  std::map<std::string, std::string> bodies;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) bodies.emplace(st.Text(0), st.Text(1));
  if (rc != SQLITE_DONE) return st.Error(sql);
  return bodies;
}

ObservationSummary SqliteStore::SummaryOf(const std::map<std::string, std::string>& bodies) {
  ObservationSummary summary;
  for (const auto& [metric, body] : bodies) {
    api::Json json = api::Json::parse(body, nullptr, /*allow_exceptions=*/false);
    ObservationSeries series = SeriesOf(metric, json);
    if (metric == kDroppedSeries) {
      summary.dropped = series.count;
    } else {
      summary.series.push_back(std::move(series));
    }
  }
  return summary;
}

Status SqliteStore::PutSeriesLocked(const std::string& trial, const ObservationSeries& series) {
  if (in_group_) {
    // The committed summary, for committed reads while the group is open.
    auto& before = group_series_before_[trial];
    if (!before.contains(series.metric)) {
      ASSIGN_OR_RETURN(auto bodies, SeriesBodiesLocked(trial));
      for (auto& [metric, body] : bodies) before.emplace(metric, std::move(body));
      before.emplace(series.metric, std::nullopt);
    }
  }
  const char* sql =
      "INSERT OR REPLACE INTO observation_series (trial, metric, body) VALUES (?, ?, ?)";
  Statement st = Prepare(sql);
  st.Bind(1, trial).Bind(2, series.metric).Bind(3, SeriesJson(series).dump());
  if (st.Step() != SQLITE_DONE) return st.Error(sql);
  return OkStatus();
}

Status SqliteStore::AppendObservations(const std::string& trial,
                                       const std::vector<ObservationRow>& rows,
                                       const std::string& source, int64_t read_to) {
  MutexLock lock(mu_);
  AwaitCommit();
  return InTransaction([&]() TRAINYARD_REQUIRES(mu_) -> Status {
    const char* source_sql =
        "INSERT INTO observation_sources (source, trial, read_to) VALUES (?, ?, ?) "
        "ON CONFLICT (source) DO UPDATE SET read_to = excluded.read_to";
    if (!source.empty()) {
      Statement st = Prepare(source_sql);
      st.Bind(1, source).Bind(2, trial).Bind(3, read_to);
      if (st.Step() != SQLITE_DONE) return st.Error(source_sql);
    }
    if (rows.empty()) return OkStatus();
    return AppendRowsLocked(trial, rows);
  });
}

Status SqliteStore::AppendRowsLocked(const std::string& trial,
                                     const std::vector<ObservationRow>& rows) {
  const char* next_sql = "SELECT COALESCE(MAX(seq), -1) + 1 FROM observations WHERE trial = ?";
  int64_t seq = 0;
  {
    Statement next = Prepare(next_sql);
    next.Bind(1, trial);
    if (next.Step() != SQLITE_ROW) return next.Error(next_sql);
    seq = next.Int(0);
  }
  ASSIGN_OR_RETURN(auto bodies, SeriesBodiesLocked(trial));
  ObservationSummary summary = SummaryOf(bodies);
  // The last value's seq is taken even when it is not kept: the next
  // append must never reuse it.
  for (const ObservationSeries& s : summary.series) seq = std::max(seq, s.last_seq + 1);
  // Committed reads see none of what the open group appends.
  if (in_group_) group_first_seq_.emplace(trial, seq);
  std::map<std::string, ObservationSeries> series;
  for (ObservationSeries& s : summary.series) series.emplace(s.metric, std::move(s));
  std::set<std::string> touched;
  int64_t dropped = 0;
  // First each value's place and the summaries, then the rows that stay at
  // the strides the whole batch calls for: a long batch never writes rows
  // only to thin them.
  std::vector<int64_t> places(rows.size(), -1);
  for (size_t i = 0; i < rows.size(); ++i) {
    const ObservationRow& row = rows[i];
    auto it = series.find(row.metric);
    if (it == series.end()) {
      if (series.size() >= kMetricsPerLog || row.metric == kDroppedSeries) {
        ++dropped;
        continue;
      }
      it = series.emplace(row.metric, ObservationSeries{.metric = row.metric}).first;
    }
    places[i] = Observe(it->second, row, seq + static_cast<int64_t>(i));
    touched.insert(row.metric);
  }
  // A new metric narrows every metric's share of the log.
  int64_t cap = KeptCap(series.size());
  const char* thin_sql = "DELETE FROM observations WHERE trial = ? AND metric = ? AND idx % ? != 0";
  for (auto& [metric, s] : series) {
    if (!Thin(s, cap)) continue;
    Statement thin = Prepare(thin_sql);
    thin.Bind(1, trial).Bind(2, metric).Bind(3, s.stride);
    if (thin.Step() != SQLITE_DONE) return thin.Error(thin_sql);
    touched.insert(metric);
  }
  const char* insert_sql =
      "INSERT INTO observations (trial, seq, time_us, metric, value, step, idx) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)";
  for (size_t i = 0; i < rows.size(); ++i) {
    const ObservationRow& row = rows[i];
    if (places[i] < 0 || !KeptAt(series[row.metric], places[i])) continue;
    Statement insert = Prepare(insert_sql);
    insert.Bind(1, trial)
        .Bind(2, seq + static_cast<int64_t>(i))
        .Bind(3, row.time_us)
        .Bind(4, row.metric)
        .Bind(5, row.value)
        .Bind(6, row.step)
        .Bind(7, places[i]);
    if (insert.Step() != SQLITE_DONE) return insert.Error(insert_sql);
  }
  for (const std::string& metric : touched) RETURN_IF_ERROR(PutSeriesLocked(trial, series[metric]));
  if (dropped > 0) {
    ObservationSeries tally{.metric = kDroppedSeries, .count = summary.dropped + dropped};
    RETURN_IF_ERROR(PutSeriesLocked(trial, tally));
  }
  return OkStatus();
}

Result<ObservationPage> SqliteStore::ListObservations(const std::string& trial,
                                                      const ObservationQuery& query) const {
  MutexLock lock(mu_);
  AwaitCommit();
  ASSIGN_OR_RETURN(auto bodies, SeriesBodiesLocked(trial));
  return ListObservationsLocked(trial, query, INT64_MAX, SummaryOf(bodies));
}

Result<ObservationSummary> SqliteStore::SummarizeObservations(const std::string& trial) const {
  MutexLock lock(mu_);
  AwaitCommit();
  ASSIGN_OR_RETURN(auto bodies, SeriesBodiesLocked(trial));
  return SummaryOf(bodies);
}

Result<ObservationPage> SqliteStore::ListObservationsLocked(
    const std::string& trial, const ObservationQuery& query, int64_t before_seq,
    const ObservationSummary& summary) const {
  // Rows deleted by the open group are gone from this read at once, unlike
  // objects: a trial's rows go only with the trial, in the same group.
  const char* all_sql =
      "SELECT time_us, metric, value, step, idx, seq FROM observations "
      "WHERE trial = ? AND seq > ? AND seq < ? ORDER BY seq LIMIT ?";
  const char* one_sql =
      "SELECT time_us, metric, value, step, idx, seq FROM observations "
      "WHERE trial = ? AND seq > ? AND seq < ? AND metric = ? ORDER BY seq LIMIT ?";
  bool one = !query.metric.empty();
  Statement st = Prepare(one ? one_sql : all_sql);
  int64_t limit = query.limit >= static_cast<size_t>(INT64_MAX) ? INT64_MAX - 1
                                                                : static_cast<int64_t>(query.limit);
  st.Bind(1, trial).Bind(2, query.after).Bind(3, before_seq);
  if (one) st.Bind(4, query.metric);
  st.Bind(one ? 5 : 4, limit + 1);
  std::vector<std::pair<int64_t, ObservationRow>> rows;
  int rc;
  while ((rc = st.Step()) == SQLITE_ROW) {
    rows.emplace_back(st.Int(5), ObservationRow{.time_us = st.Int(0),
                                                .metric = st.Text(1),
                                                .value = st.Text(2),
                                                .step = st.Int(3),
                                                .index = st.Int(4)});
  }
  if (rc != SQLITE_DONE) return st.Error(one ? one_sql : all_sql);
  // A thinned metric's last value, where it was not kept, is read all the
  // same: a curve ends where its run did.
  for (const ObservationSeries& s : summary.series) {
    if (s.count == 0 || KeptAt(s, s.count - 1) || (one && s.metric != query.metric)) continue;
    if (s.last_seq > query.after && s.last_seq < before_seq) rows.emplace_back(s.last_seq, s.last);
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ObservationPage page;
  size_t n = std::min(rows.size(), query.limit);
  page.rows.reserve(n);
  for (size_t i = 0; i < n; ++i) page.rows.push_back(std::move(rows[i].second));
  if (rows.size() > n) page.next = n > 0 ? rows[n - 1].first : query.after;
  return page;
}

Status SqliteStore::MigrateObservations() {
  const char* has_sql = "SELECT COUNT(*) FROM pragma_table_info('observations') WHERE name = 'idx'";
  {
    Statement has = Prepare(has_sql);
    if (has.Step() != SQLITE_ROW) return has.Error(has_sql);
    if (has.Int(0) == 0) {
      RETURN_IF_ERROR(Exec("ALTER TABLE observations ADD COLUMN idx INTEGER NOT NULL DEFAULT -1"));
    }
  }
  // One metric's rows, to thin or read them, without a walk over the log's.
  RETURN_IF_ERROR(Exec(
      "CREATE INDEX IF NOT EXISTS observations_by_metric ON observations (trial, metric, idx)"));
  const char* legacy_sql = "SELECT COUNT(*) FROM observations WHERE idx = -1";
  {
    Statement legacy = Prepare(legacy_sql);
    if (legacy.Step() != SQLITE_ROW) return legacy.Error(legacy_sql);
    if (legacy.Int(0) == 0) return OkStatus();
  }
  // A store from before logs were bounded: each value gets its place, each
  // log its summaries, and a long one is thinned, once.
  return InTransaction([&]() TRAINYARD_REQUIRES(mu_) -> Status {
    RETURN_IF_ERROR(
        Exec("UPDATE observations SET idx = n FROM (SELECT trial AS t, seq AS s, ROW_NUMBER() OVER "
             "(PARTITION BY trial, metric ORDER BY seq) - 1 AS n FROM observations) "
             "WHERE trial = t AND seq = s"));
    const char* sql =
        "SELECT trial, seq, time_us, metric, value, step FROM observations ORDER BY trial, seq";
    std::vector<std::pair<std::string, std::map<std::string, ObservationSeries>>> logs;
    {
      Statement st = Prepare(sql);
      int rc;
      while ((rc = st.Step()) == SQLITE_ROW) {
        std::string trial = st.Text(0);
        if (logs.empty() || logs.back().first != trial) {
          logs.emplace_back(trial, std::map<std::string, ObservationSeries>());
        }
        ObservationRow row{
            .time_us = st.Int(2), .metric = st.Text(3), .value = st.Text(4), .step = st.Int(5)};
        auto& series = logs.back().second;
        auto it = series.try_emplace(row.metric, ObservationSeries{.metric = row.metric}).first;
        Observe(it->second, row, st.Int(1));
      }
      if (rc != SQLITE_DONE) return st.Error(sql);
    }
    const char* thin_sql =
        "DELETE FROM observations WHERE trial = ? AND metric = ? AND idx % ? != 0";
    for (auto& [trial, series] : logs) {
      int64_t cap = KeptCap(series.size());
      for (auto& [metric, s] : series) {
        if (Thin(s, cap)) {
          Statement thin = Prepare(thin_sql);
          thin.Bind(1, trial).Bind(2, metric).Bind(3, s.stride);
          if (thin.Step() != SQLITE_DONE) return thin.Error(thin_sql);
        }
        RETURN_IF_ERROR(PutSeriesLocked(trial, s));
      }
    }
    return OkStatus();
  });
}

Result<int64_t> SqliteStore::ObservationsReadTo(const std::string& source) const {
  MutexLock lock(mu_);
  AwaitCommit();
  const char* sql = "SELECT read_to FROM observation_sources WHERE source = ?";
  Statement st = Prepare(sql);
  st.Bind(1, source);
  int rc = st.Step();
  if (rc == SQLITE_ROW) return st.Int(0);
  if (rc != SQLITE_DONE) return st.Error(sql);
  return int64_t{0};
}

Status SqliteStore::DeleteObservations(const std::string& trial) {
  MutexLock lock(mu_);
  AwaitCommit();
  return InTransaction([&]() TRAINYARD_REQUIRES(mu_) -> Status {
    for (const char* sql : {"DELETE FROM observations WHERE trial = ?",
                            "DELETE FROM observation_series WHERE trial = ?",
                            "DELETE FROM observation_sources WHERE trial = ?"}) {
      Statement st = Prepare(sql);
      st.Bind(1, trial);
      if (st.Step() != SQLITE_DONE) return st.Error(sql);
    }
    return OkStatus();
  });
}

}  // namespace trainyard::store
