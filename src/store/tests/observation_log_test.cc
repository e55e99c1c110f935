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
  {
    // The observations table as stores made before steps have it.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE observations (trial TEXT NOT NULL, seq INTEGER NOT NULL, "
                           "time_us INTEGER NOT NULL, metric TEXT NOT NULL, value TEXT NOT NULL, "
                           "PRIMARY KEY (trial, seq)) WITHOUT ROWID;"
                           "INSERT INTO observations VALUES ('ns/t', 0, 1, 'loss', '0.5');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
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
