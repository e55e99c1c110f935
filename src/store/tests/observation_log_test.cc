#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

std::vector<ObservationRow> Rows(std::initializer_list<std::pair<const char*, const char*>> rows) {
  std::vector<ObservationRow> out;
  int64_t t = 1;
  for (const auto& [metric, value] : rows)
    out.push_back({.time_us = t++, .metric = metric, .value = value});
  return out;
}

// The database and SQLite's files beside it.
void RemoveDb(const std::filesystem::path& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

// A database path of this test process's own, with nothing there yet.
std::filesystem::path FreshDb(const std::string& name) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("trainyard-" + name + "-" + std::to_string(getpid()) + ".db");
  RemoveDb(path);
  return path;
}

// A database at `path` made by `sql`, as an older trainyard left it.
bool MakeDb(const std::filesystem::path& path, const char* sql) {
  sqlite3* db = nullptr;
  bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
            sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(db);
  return ok;
}

TEST(ObservationLogTest, KeepsEachTrialsRowsInOrder) {
  auto store = SqliteStore::Open({});
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE(
      (*store)->AppendObservations("ns/a", Rows({{"loss", "0.5"}, {"acc", "0.7"}}), "", 0).ok());
  ASSERT_TRUE((*store)->AppendObservations("ns/b", Rows({{"loss", "0.9"}}), "", 0).ok());
  ASSERT_TRUE((*store)->AppendObservations("ns/a", Rows({{"loss", "0.25"}}), "", 0).ok());
  auto a = (*store)->ListObservations("ns/a");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[0].value, "0.5");
  EXPECT_EQ((*a)[1].metric, "acc");
  EXPECT_EQ((*a)[2].value, "0.25");
  EXPECT_EQ((*store)->ListObservations("ns/b")->size(), 1u);
  EXPECT_TRUE((*store)->ListObservations("ns/none")->empty());
  ASSERT_TRUE((*store)->AppendObservations("ns/a", {}, "/logs/a.log", 120).ok());
  EXPECT_EQ(*(*store)->ObservationsReadTo("/logs/a.log"), 120);
  EXPECT_EQ(*(*store)->ObservationsReadTo("/logs/b.log"), 0);
  ASSERT_TRUE((*store)->DeleteObservations("ns/a").ok());
  EXPECT_EQ(*(*store)->ObservationsReadTo("/logs/a.log"), 0);
  EXPECT_TRUE((*store)->ListObservations("ns/a")->empty());
  EXPECT_EQ((*store)->ListObservations("ns/b")->size(), 1u);
}

TEST(ObservationLogTest, RowsSurviveReopeningAndCommitWithTheGroup) {
  std::filesystem::path path = FreshDb("observations");
  {
    auto store = SqliteStore::Open({.path = path.string()});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->AppendObservations("ns/t", Rows({{"loss", "1"}}), "", 0).ok());
    ASSERT_TRUE((*store)->BeginGroup().ok());
    ASSERT_TRUE((*store)->AppendObservations("ns/t", Rows({{"loss", "2"}}), "/logs/t.log", 7).ok());
    // Visible inside the group before it commits.
    EXPECT_EQ((*store)->ListObservations("ns/t")->size(), 2u);
    ASSERT_TRUE((*store)->CommitGroup().ok());
  }
  auto reopened = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(reopened.ok());
  auto rows = (*reopened)->ListObservations("ns/t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1].value, "2");
  EXPECT_EQ(*(*reopened)->ObservationsReadTo("/logs/t.log"), 7);
  reopened->reset();
  RemoveDb(path);
}

TEST(ObservationLogTest, StepsAreKeptAndAStoreFromBeforeStepsGetsTheColumn) {
  std::filesystem::path path = FreshDb("steps");
  // The observations table as stores made before steps have it.
  ASSERT_TRUE(MakeDb(path,
                     "CREATE TABLE observations (trial TEXT NOT NULL, seq INTEGER NOT NULL, "
                     "time_us INTEGER NOT NULL, metric TEXT NOT NULL, value TEXT NOT NULL, "
                     "PRIMARY KEY (trial, seq)) WITHOUT ROWID;"
                     "INSERT INTO observations VALUES ('ns/t', 0, 1, 'loss', '0.5');"));
  auto store = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE(
      (*store)
          ->AppendObservations("ns/t",
                               {{.time_us = 2, .metric = "loss", .value = "0.4", .step = 100},
                                {.time_us = 3, .metric = "loss", .value = "0.3", .step = -5}},
                               "", 0)
          .ok());
  auto rows = (*store)->ListObservations("ns/t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[2].step, -5);       // MLflow takes negative steps
  EXPECT_EQ((*rows)[0].step, kNoStep);  // logged without one
  EXPECT_EQ((*rows)[1].step, 100);
  store->reset();
  RemoveDb(path);
}

// A batch that fails halfway inside a write group leaves none of its rows to
// be committed with the group.
TEST(ObservationLogTest, ABatchThatFailsInAGroupLeavesNoneOfItsRows) {
  std::filesystem::path path = FreshDb("observations-half");
  auto store = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(store.ok());
  // A second connection adds what makes the second row of a batch fail.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER boom BEFORE INSERT ON observations WHEN NEW.metric = "
                         "'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  ASSERT_TRUE((*store)->BeginGroup().ok());
  ASSERT_TRUE((*store)->AppendObservations("ns/t", Rows({{"loss", "1"}}), "", 0).ok());
  EXPECT_FALSE(
      (*store)->AppendObservations("ns/t", Rows({{"loss", "2"}, {"boom", "3"}}), "", 0).ok());
  ASSERT_TRUE((*store)->CommitGroup().ok());
  auto rows = (*store)->ListObservations("ns/t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u) << "half a failed batch was committed";
  EXPECT_EQ((*rows)[0].value, "1");
  store->reset();
  RemoveDb(path);
}

}  // namespace
}  // namespace trainyard::store

namespace trainyard::store {
namespace {

// `n` values of `metric`: 1, 2, ..., with one low spike at `spike`.
std::vector<ObservationRow> Counting(const std::string& metric, int64_t from, int64_t n,
                                     int64_t spike = -1) {
  std::vector<ObservationRow> rows;
  for (int64_t i = from; i < from + n; ++i) {
    rows.push_back(
        {.time_us = i, .metric = metric, .value = i == spike ? "-7" : std::to_string(i)});
  }
  return rows;
}

// However much a job prints, a metric keeps a bounded number of rows, every
// stride-th by its place, and its last; its count, min, max and latest are
// exact.
TEST(ObservationLogTest, ALongMetricIsThinnedAndItsSummaryStaysExact) {
  auto store = SqliteStore::Open({});
  ASSERT_TRUE(store.ok());
  const int64_t total = 3 * kKeptPerMetric + 7;
  for (int64_t from = 0; from < total; from += 5'000) {
    int64_t n = std::min<int64_t>(5'000, total - from);
    ASSERT_TRUE(
        (*store)->AppendObservations("ns/j", Counting("loss", from, n, 12'345), "", 0).ok());
  }
  auto rows = (*store)->ListObservations("ns/j");
  ASSERT_TRUE(rows.ok());
  EXPECT_LE(static_cast<int64_t>(rows->size()), kKeptPerMetric + 1);
  EXPECT_GT(static_cast<int64_t>(rows->size()), kKeptPerMetric / 2);
  auto summary = (*store)->SummarizeObservations("ns/j");
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->series.size(), 1u);
  const ObservationSeries& loss = summary->series[0];
  EXPECT_EQ(loss.count, total);
  EXPECT_EQ(loss.stride, 4);
  EXPECT_TRUE(summary->Thinned());
  EXPECT_EQ(loss.min, "-7");  // a spike thinning passed over
  EXPECT_EQ(loss.max, std::to_string(total - 1));
  EXPECT_EQ(loss.latest.value, std::to_string(total - 1));
  for (size_t i = 0; i + 1 < rows->size(); ++i) {
    EXPECT_EQ((*rows)[i].index % loss.stride, 0) << i;
    EXPECT_EQ((*rows)[i].value, std::to_string((*rows)[i].index));
  }
  // The last value, not on the stride, is read all the same.
  EXPECT_EQ(rows->back().index, total - 1);
  EXPECT_EQ(rows->back().value, std::to_string(total - 1));
  // Pages read the same rows, each once, in order.
  std::vector<ObservationRow> paged;
  ObservationQuery query{.limit = 777};
  while (true) {
    auto page = (*store)->ListObservations("ns/j", query);
    ASSERT_TRUE(page.ok());
    paged.insert(paged.end(), page->rows.begin(), page->rows.end());
    if (page->next < 0) break;
    query.after = page->next;
  }
  EXPECT_EQ(paged, *rows);
}

// Many metrics share a log's rows; past its bound of metrics, values are
// counted, not kept.
TEST(ObservationLogTest, ALogOfManyMetricsStaysWithinItsBound) {
  auto store = SqliteStore::Open({});
  ASSERT_TRUE(store.ok());
  std::vector<ObservationRow> rows;
  for (size_t m = 0; m < kMetricsPerLog + 5; ++m) {
    for (int64_t i = 0; i < 300; ++i) {
      rows.push_back({.time_us = i, .metric = "m" + std::to_string(m), .value = "1"});
    }
  }
  ASSERT_TRUE((*store)->AppendObservations("ns/j", rows, "", 0).ok());
  auto kept = (*store)->ListObservations("ns/j");
  ASSERT_TRUE(kept.ok());
  EXPECT_LE(static_cast<int64_t>(kept->size()), kKeptPerLog + static_cast<int64_t>(kMetricsPerLog));
  auto summary = (*store)->SummarizeObservations("ns/j");
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->series.size(), kMetricsPerLog);
  EXPECT_EQ(summary->dropped, 5 * 300);
  ASSERT_TRUE((*store)->DeleteObservations("ns/j").ok());
  EXPECT_TRUE((*store)->SummarizeObservations("ns/j")->series.empty());
}

// A store from before logs were bounded: its values get their places and
// its logs their summaries when it is opened.
TEST(ObservationLogTest, AStoreFromBeforeBoundsGetsPlacesAndSummaries) {
  std::filesystem::path path = FreshDb("unbounded");
  ASSERT_TRUE(MakeDb(path,
                     "CREATE TABLE observations (trial TEXT NOT NULL, seq INTEGER NOT NULL, "
                     "time_us INTEGER NOT NULL, metric TEXT NOT NULL, value TEXT NOT NULL, "
                     "step INTEGER NOT NULL DEFAULT -9223372036854775808, "
                     "PRIMARY KEY (trial, seq)) WITHOUT ROWID;"
                     "INSERT INTO observations (trial, seq, time_us, metric, value) VALUES "
                     "('ns/t', 0, 1, 'loss', '0.5'), ('ns/t', 1, 2, 'acc', '0.1'), "
                     "('ns/t', 2, 3, 'loss', '0.25');"));
  auto store = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(store.ok()) << store.status().message();
  auto rows = (*store)->ListObservations("ns/t");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[2].index, 1);  // loss's second value
  auto summary = (*store)->SummarizeObservations("ns/t");
  ASSERT_TRUE(summary.ok());
  ASSERT_EQ(summary->series.size(), 2u);
  EXPECT_EQ(summary->series[1].metric, "loss");
  EXPECT_EQ(summary->series[1].min, "0.25");
  EXPECT_EQ(summary->series[1].count, 2);
  // New values go on from there.
  ASSERT_TRUE((*store)->AppendObservations("ns/t", Rows({{"loss", "0.125"}}), "", 0).ok());
  EXPECT_EQ((*store)->ListObservations("ns/t")->back().index, 2);
  store->reset();
  RemoveDb(path);
}

// What a write group appends is summarized for committed reads only once
// the group commits.
TEST(ObservationLogTest, ACommittedSummaryIsTheOneBeforeTheOpenGroup) {
  auto store = SqliteStore::Open({});
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->AppendObservations("ns/t", Rows({{"loss", "1"}}), "", 0).ok());
  ASSERT_TRUE((*store)->BeginGroup().ok());
  ASSERT_TRUE(
      (*store)->AppendObservations("ns/t", Rows({{"loss", "0.5"}, {"acc", "0.9"}}), "", 0).ok());
  CommittedReader& committed = (*store)->committed();
  auto before = committed.SummarizeObservations("ns/t");
  ASSERT_TRUE(before.ok());
  ASSERT_EQ(before->series.size(), 1u);
  EXPECT_EQ(before->series[0].min, "1");
  EXPECT_EQ(committed.ListObservations("ns/t")->size(), 1u);
  ASSERT_TRUE((*store)->CommitGroup().ok());
  EXPECT_EQ(committed.SummarizeObservations("ns/t")->series.size(), 2u);
  EXPECT_EQ(committed.ListObservations("ns/t")->size(), 3u);
}

}  // namespace
}  // namespace trainyard::store
