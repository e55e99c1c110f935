#include "store/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "store/tests/full_disk_vfs.h"

namespace trainyard::store {
namespace {

using api::Json;

Json Job(const std::string& name, const std::string& ns = "default") {
  return {{"apiVersion", "kubeflow.org/v1"},
          {"kind", "PyTorchJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", {{"pytorchReplicaSpecs", Json::object()}}}};
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    SqliteStoreOptions options;
    options.clock = &clock_;
    options.kept_events = 5;
    options.new_uid = [n]() mutable { return "uid-" + std::to_string(++n); };
    auto store = SqliteStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }

  FakeClock clock_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteStoreTest, CreateAssignsWhatTheStoreMaintains) {
  Result<Json> created = store_->Create(Job("a"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const Json& meta = (*created)["metadata"];
  EXPECT_EQ(meta["uid"], "uid-1");
  EXPECT_EQ(meta["resourceVersion"], "1");
  EXPECT_EQ(meta["generation"], 1);
  EXPECT_EQ(meta["creationTimestamp"], FormatRfc3339(clock_.Now()));
  EXPECT_EQ(*store_->Get({"PyTorchJob", "default", "a"}), *created);
  Result<Json> again = store_->Create(Job("a"));
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "PyTorchJob default/a already exists");
  EXPECT_EQ(store_->Get({"PyTorchJob", "default", "b"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->CurrentResourceVersion(), 1);  // the refused create wrote nothing
}

TEST_F(SqliteStoreTest, RejectsObjectsWithoutKindOrName) {
  EXPECT_EQ(store_->Create(Json{{"kind", "PyTorchJob"}}).status().message(),
            "metadata.name: Required value");
  EXPECT_EQ(store_->Create(Json::object()).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(SqliteStoreTest, ListsByKindAndNamespaceInOrder) {
  ASSERT_TRUE(store_->Create(Job("b", "team-a")).ok());
  ASSERT_TRUE(store_->Create(Job("a", "team-b")).ok());
  ASSERT_TRUE(store_->Create(Job("a", "team-a")).ok());
  auto all = store_->List("PyTorchJob", "");
  ASSERT_TRUE(all.ok());
  std::vector<std::string> names;
  for (const Json& j : all->items)
    names.push_back(j["metadata"]["namespace"].get<std::string>() + "/" +
                    j["metadata"]["name"].get<std::string>());
  EXPECT_THAT(names, ::testing::ElementsAre("team-a/a", "team-a/b", "team-b/a"));
  EXPECT_EQ(all->resource_version, 3);
  EXPECT_EQ(store_->List("PyTorchJob", "team-b")->items.size(), 1u);
  EXPECT_TRUE(store_->List("TFJob", "")->items.empty());
}

TEST_F(SqliteStoreTest, UpdateChecksVersionBumpsGenerationOnSpecAndKeepsStatus) {
  Json job = *store_->Create(Job("a"));
  job["status"] = {{"conditions", Json::array({{{"type", "Created"}}})}};
  job = *store_->UpdateStatus(job);
  EXPECT_EQ(job["metadata"]["resourceVersion"], "2");

  Json labelled = job;
  labelled["metadata"]["labels"] = {{"team", "a"}};
  labelled.erase("status");  // an update cannot drop the status
  Json updated = *store_->Update(labelled);
  EXPECT_EQ(updated["metadata"]["generation"], 1);  // metadata only: same generation
  EXPECT_EQ(updated["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(updated["status"], job["status"]);

  Json respec = updated;
  respec["spec"]["runPolicy"] = {{"suspend", true}};
  respec["metadata"]["uid"] = "forged";
  Json v4 = *store_->Update(respec);
  EXPECT_EQ(v4["metadata"]["generation"], 2);
  EXPECT_EQ(v4["metadata"]["uid"], "uid-1");

  // A stale resourceVersion is a conflict and changes nothing.
  Result<Json> stale = store_->Update(updated);
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_THAT(stale.status().message(), ::testing::HasSubstr("the object has been modified"));
  EXPECT_EQ(store_->CurrentResourceVersion(), 4);

  // Writing the same thing again is not a change.
  EXPECT_EQ((*store_->Update(v4))["metadata"]["resourceVersion"], "4");
  EXPECT_EQ(store_->CurrentResourceVersion(), 4);
}

TEST_F(SqliteStoreTest, UpdateStatusTouchesOnlyTheStatus) {
  Json job = *store_->Create(Job("a"));
  Json change = job;
  change["spec"] = {{"changed", true}};
  change["status"] = {{"startTime", "2026-11-21T00:00:00Z"}};
  Json stored = *store_->UpdateStatus(change);
  EXPECT_EQ(stored["spec"], job["spec"]);
  EXPECT_EQ(stored["status"]["startTime"], "2026-11-21T00:00:00Z");
}

TEST_F(SqliteStoreTest, AWriteThatChangesNothingIsNoWriteAndNoEvent) {
  int events = 0;
  ASSERT_TRUE(store_->Watch(0, [&](const WatchEvent&) { ++events; }).ok());
  Json job = *store_->Create(Job("a"));
  // No status before, none now; the same status twice.
  EXPECT_EQ((*store_->UpdateStatus(job))["metadata"]["resourceVersion"], "1");
  job["status"] = {{"x", 1}};
  job = *store_->UpdateStatus(job);
  EXPECT_EQ((*store_->UpdateStatus(job))["metadata"]["resourceVersion"], "2");
  // The same object with its metadata in another order and no
  // resourceVersion (the store's own field) is the same object.
  Json reordered = {{"metadata", Json::object()}};
  for (const char* field : {"uid", "name", "generation", "namespace", "creationTimestamp"}) {
    reordered["metadata"][field] = job["metadata"][field];
  }
  for (const char* field : {"spec", "kind", "apiVersion"}) reordered[field] = job[field];
  EXPECT_EQ((*store_->Update(reordered))["metadata"]["resourceVersion"], "2");
  // A field that differs is a change, however deep.
  reordered["metadata"]["labels"] = {{"a", "b"}};
  EXPECT_EQ((*store_->Update(reordered))["metadata"]["resourceVersion"], "3");
  EXPECT_EQ(store_->CurrentResourceVersion(), 3);
  EXPECT_EQ(events, 3);
}

TEST_F(SqliteStoreTest, DeleteReturnsTheLastStateAtANewVersion) {
  ASSERT_TRUE(store_->Create(Job("a")).ok());
  Result<Json> deleted = store_->Delete({"PyTorchJob", "default", "a"});
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ((*deleted)["metadata"]["resourceVersion"], "2");
  EXPECT_EQ(store_->Get({"PyTorchJob", "default", "a"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store_->Delete({"PyTorchJob", "default", "a"}).status().code(), StatusCode::kNotFound);
}

TEST_F(SqliteStoreTest, WatchSeesEveryChangeInOrderAndResumes) {
  std::vector<std::pair<EventType, int64_t>> seen;
  WatchId id = *store_->Watch(
      0, [&](const WatchEvent& e) { seen.emplace_back(e.type, e.resource_version); });
  Json a = *store_->Create(Job("a"));
  a["status"] = {{"x", 1}};
  ASSERT_TRUE(store_->UpdateStatus(a).ok());
  ASSERT_TRUE(store_->Delete({"PyTorchJob", "default", "a"}).ok());
  store_->StopWatch(id);
  ASSERT_TRUE(store_->Create(Job("b")).ok());
  EXPECT_THAT(seen, ::testing::ElementsAre(std::pair{EventType::kAdded, int64_t{1}},
                                           std::pair{EventType::kModified, int64_t{2}},
                                           std::pair{EventType::kDeleted, int64_t{3}}));
  // Resuming from 2 replays 3 and 4, then follows.
  std::vector<int64_t> resumed;
  ASSERT_TRUE(
      store_->Watch(2, [&](const WatchEvent& e) { resumed.push_back(e.resource_version); }).ok());
  ASSERT_TRUE(store_->Create(Job("c")).ok());
  EXPECT_THAT(resumed, ::testing::ElementsAre(3, 4, 5));
}

TEST_F(SqliteStoreTest, WatchFromBeyondTheKeptHistoryMustListAgain) {
  // kept_events is 5: at the 10th write, events up to 5 are pruned.
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(store_->Create(Job("j" + std::to_string(i))).ok());
  Result<WatchId> old = store_->Watch(1, [](const WatchEvent&) {});
  EXPECT_EQ(old.status().code(), StatusCode::kOutOfRange);
  EXPECT_THAT(old.status().message(), ::testing::HasSubstr("list again"));
  EXPECT_TRUE(store_->Watch(5, [](const WatchEvent&) {}).ok());  // 6..12 are kept
}

TEST_F(SqliteStoreTest, CommittedWatchersSeeAGroupOnlyOnceItIsDurable) {
  ASSERT_TRUE(store_->Create(Job("a")).ok());
  std::vector<int64_t> early, late, plain;
  ASSERT_TRUE(store_
                  ->WatchCommitted(0,
                                   [&](auto batch) {
                                     for (const auto& e : batch)
                                       early.push_back(e->resource_version);
                                   })
                  .ok());
  ASSERT_TRUE(
      store_->Watch(0, [&](const WatchEvent& e) { plain.push_back(e.resource_version); }).ok());
  ASSERT_TRUE(store_->BeginGroup().ok());
  ASSERT_TRUE(store_->Create(Job("b")).ok());
  // A committed watch from 1, taken while the group is open, replays only
  // what is durable (nothing after 1) and gets the group at its commit.
  ASSERT_TRUE(store_
                  ->WatchCommitted(1,
                                   [&](auto batch) {
                                     for (const auto& e : batch)
                                       late.push_back(e->resource_version);
                                   })
                  .ok());
  ASSERT_TRUE(store_->Create(Job("c")).ok());
  EXPECT_THAT(plain, ::testing::ElementsAre(2, 3));  // the engine's kind: at once
  EXPECT_TRUE(early.empty());
  EXPECT_TRUE(late.empty());
  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_THAT(early, ::testing::ElementsAre(2, 3));
  EXPECT_THAT(late, ::testing::ElementsAre(2, 3));
  ASSERT_TRUE(store_->Create(Job("d")).ok());  // outside a group: at once
  EXPECT_THAT(early, ::testing::ElementsAre(2, 3, 4));
}

// A group's events are kept in memory for its commit only while someone
// watches: the first committed watcher, come mid-group, still gets the
// group's writes from before it came.
TEST_F(SqliteStoreTest, TheFirstCommittedWatcherComeMidGroupGetsTheWholeGroup) {
  ASSERT_TRUE(store_->BeginGroup().ok());
  ASSERT_TRUE(store_->Create(Job("a")).ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(store_
                  ->WatchCommitted(0,
                                   [&](std::span<const SharedWatchEvent> batch) {
                                     for (const SharedWatchEvent& e : batch) {
                                       seen.push_back(e->object["metadata"]["name"]);
                                       EXPECT_EQ(api::Json::parse(*e->text), e->object);
                                     }
                                   })
                  .ok());
  ASSERT_TRUE(store_->Create(Job("b")).ok());
  EXPECT_TRUE(seen.empty());
  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_THAT(seen, ::testing::ElementsAre("a", "b"));
}

// The last watcher leaves mid-group and another comes: the group's
// changes reach it once each, in order.
TEST_F(SqliteStoreTest, AWatcherThatComesBackMidGroupGetsEachChangeOnce) {
  auto names_into = [](std::vector<std::string>& out) {
    return [&out](std::span<const SharedWatchEvent> batch) {
      for (const SharedWatchEvent& e : batch) out.push_back(e->object["metadata"]["name"]);
    };
  };
  std::vector<std::string> first, second;
  Result<WatchId> watch = store_->WatchCommitted(0, names_into(first));
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(store_->BeginGroup().ok());
  ASSERT_TRUE(store_->Create(Job("a")).ok());
  store_->StopWatch(*watch);
  ASSERT_TRUE(store_->Create(Job("b")).ok());
  ASSERT_TRUE(store_->WatchCommitted(0, names_into(second)).ok());
  ASSERT_TRUE(store_->Create(Job("c")).ok());
  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_TRUE(first.empty());
  EXPECT_THAT(second, ::testing::ElementsAre("a", "b", "c"));
}

TEST_F(SqliteStoreTest, AGroupLongerThanTheKeptHistoryStillReachesCommittedWatchers) {
  std::vector<int64_t> seen;
  ASSERT_TRUE(store_
                  ->WatchCommitted(0,
                                   [&](auto batch) {
                                     for (const auto& e : batch)
                                       seen.push_back(e->resource_version);
                                   })
                  .ok());
  ASSERT_TRUE(store_->BeginGroup().ok());
  // kept_events is 5: pruning must not take the group's own events before
  // its commit has replayed them.
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(store_->Create(Job("g" + std::to_string(i))).ok());
  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_EQ(seen.size(), 12u);
}

TEST(SqliteStoreDurabilityTest, WhatWasWrittenSurvivesReopening) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("trainyard-store-test-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  {
    auto store = SqliteStore::Open({.path = path.string()});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Create(Job("a")).ok());
    ASSERT_TRUE((*store)->Create(Job("b")).ok());
    ASSERT_TRUE((*store)->Create(Job("gone")).ok());
    ASSERT_TRUE((*store)->Delete({"PyTorchJob", "default", "gone"}).ok());
  }
  auto reopened = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->CurrentResourceVersion(), 4);
  EXPECT_EQ((*reopened)->List("PyTorchJob", "")->items.size(), 2u);
  Json c = *(*reopened)->Create(Job("c"));
  EXPECT_EQ(c["metadata"]["resourceVersion"], "5");  // versions keep increasing
  EXPECT_NE(c["metadata"]["uid"],
            (*(*reopened)->Get({"PyTorchJob", "default", "a"}))["metadata"]["uid"]);
  reopened->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

TEST(SqliteStoreDurabilityTest, AnUnopenablePathIsAnError) {
  auto store = SqliteStore::Open({.path = "/nonexistent-dir/x/store.db"});
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
}

Json OwnedPod(const std::string& name, const std::string& owner_uid) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "default"},
            {"ownerReferences", {{{"kind", "Job"}, {"name", "j"}, {"uid", owner_uid}}}}}}};
}

std::vector<std::string> OwnedNames(const SqliteStore& store, const std::string& uid) {
  std::vector<std::string> names;
  EXPECT_TRUE(store
                  .ScanOwnedBy("Pod", uid,
                               [&](const Json& pod) { names.push_back(pod["metadata"]["name"]); })
                  .ok());
  return names;
}

TEST_F(SqliteStoreTest, ScanOwnedByFollowsEveryWrite) {
  ASSERT_TRUE(store_->Create(OwnedPod("b", "u1")).ok());
  ASSERT_TRUE(store_->Create(OwnedPod("a", "u1")).ok());
  ASSERT_TRUE(store_->Create(OwnedPod("c", "u2")).ok());
  ASSERT_TRUE(store_->Create(Job("not-a-pod")).ok());
  EXPECT_THAT(OwnedNames(*store_, "u1"), ::testing::ElementsAre("a", "b"));
  Json moved = OwnedPod("b", "u2");
  ASSERT_TRUE(store_->Update(moved).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "default", "c"}).ok());
  EXPECT_THAT(OwnedNames(*store_, "u1"), ::testing::ElementsAre("a"));
  EXPECT_THAT(OwnedNames(*store_, "u2"), ::testing::ElementsAre("b"));
  EXPECT_THAT(OwnedNames(*store_, "nobody"), ::testing::IsEmpty());
}

// A store file of its own, removed (with its WAL) at the end.
class SqliteStoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("trainyard-store-file-test-" + std::to_string(getpid()) + ".db");
    Remove();
  }
  void TearDown() override {
    testing::FullDiskVfs::SetFull(false);
    Remove();
  }
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm", ".new"}) {
      std::filesystem::remove(path_.string() + suffix);
    }
  }
  Result<std::unique_ptr<SqliteStore>> Open(std::string vfs = "") {
    return SqliteStore::Open({.path = path_.string(), .vfs = std::move(vfs)});
  }
  // Runs `sql` on the store file behind the store's back.
  void Tamper(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

  std::filesystem::path path_;
};

// A commit's fsync holds no lock that reads need: the API reads on, as of
// the last commit, while the disk is slow; a write waits for the commit.
TEST_F(SqliteStoreFileTest, ReadsGoOnWhileACommitWaitsForTheDisk) {
  auto store = Open(testing::FullDiskVfs::Name());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  SqliteStore& s = **store;
  ASSERT_TRUE(s.Create(Job("durable")).ok());
  ASSERT_TRUE(s.BeginGroup().ok());
  ASSERT_TRUE(s.Create(Job("pending")).ok());
  testing::FullDiskVfs::HoldSyncs(true);
  std::future<Status> commit = std::async(std::launch::async, [&] { return s.CommitGroup(); });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (testing::FullDiskVfs::syncs_waiting() == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_GT(testing::FullDiskVfs::syncs_waiting(), 0) << "the commit never reached its sync";
  // In another thread, so that a read stuck behind the commit fails the
  // test instead of hanging it.
  std::future<bool> reads = std::async(std::launch::async, [&] {
    return s.committed().Get({"PyTorchJob", "default", "durable"}).ok() &&
           s.committed().Get({"PyTorchJob", "default", "pending"}).status().code() ==
               StatusCode::kNotFound &&
           s.committed().CurrentResourceVersion() == 1;
  });
  std::future<Result<Json>> write =
      std::async(std::launch::async, [&] { return s.Create(Job("after")); });
  bool read_during_commit = reads.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  bool wrote_during_commit =
      write.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
  testing::FullDiskVfs::HoldSyncs(false);
  ASSERT_TRUE(read_during_commit) << "a read waited for the commit's sync";
  EXPECT_TRUE(reads.get());
  EXPECT_FALSE(wrote_during_commit) << "a write went into the database mid-commit";
  EXPECT_TRUE(commit.get().ok());
  EXPECT_TRUE(write.get().ok());
  EXPECT_TRUE(s.committed().Get({"PyTorchJob", "default", "pending"}).ok());
  EXPECT_EQ(s.committed().CurrentResourceVersion(), 3);
}

TEST_F(SqliteStoreFileTest, AnEmptyFileThatWasNotJustCreatedIsRefused) {
  std::ofstream{path_};  // truncated to 0 bytes
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              ::testing::HasSubstr("is empty (0 bytes) but was not just created"));
  EXPECT_EQ(std::filesystem::file_size(path_), 0u);  // left as it was found
}

TEST_F(SqliteStoreFileTest, AStoreWhoseCreationWasInterruptedOpens) {
  // Created, but the schema never reached it: the marker says so.
  std::ofstream{path_.string() + ".new"};
  std::ofstream{path_};
  ASSERT_TRUE(Open().ok());
  EXPECT_FALSE(std::filesystem::exists(path_.string() + ".new"));
  ASSERT_TRUE(Open().ok());  // and, with its schema, opens again
}

TEST_F(SqliteStoreFileTest, ARowThatIsNotJsonIsRefusedByName) {
  ASSERT_TRUE((*Open())->Create(Job("a")).ok());
  Tamper("UPDATE objects SET body = '{not json' WHERE name = 'a'");
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(),
              ::testing::HasSubstr("the stored PyTorchJob default/a is not a JSON object"));
}

TEST_F(SqliteStoreFileTest, ACounterBehindTheStoredVersionsIsMovedUp) {
  {
    auto store = Open();
    ASSERT_TRUE((*store)->Create(Job("a")).ok());
    ASSERT_TRUE((*store)->Create(Job("b")).ok());
  }
  Tamper("UPDATE counters SET value = 1 WHERE name = 'resource_version'");
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->CurrentResourceVersion(), 2);
  Result<Json> c = (*store)->Create(Job("c"));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)["metadata"]["resourceVersion"], "3");
}

TEST_F(SqliteStoreTest, CommittedReadsSeeAnOpenGroupOnlyOnceItCommits) {
  ASSERT_TRUE(store_->Create(Job("a")).ok());
  ASSERT_TRUE(store_->Create(Job("b")).ok());
  ASSERT_TRUE(store_->Create(OwnedPod("kept", "u1")).ok());
  ASSERT_TRUE(store_->AppendObservations("default/t", {{1, "loss", "0.5"}}, "", 0).ok());
  const CommittedReader& committed = store_->committed();
  auto names = [](const ObjectReader& reader, const std::string& kind) {
    std::vector<std::string> out;
    EXPECT_TRUE(
        reader.Scan(kind, "", [&](const Json& o) { out.push_back(o["metadata"]["name"]); }).ok());
    return out;
  };
  auto owned = [](const ObjectReader& reader, const std::string& uid) {
    std::vector<std::string> out;
    EXPECT_TRUE(
        reader.ScanOwnedBy("Pod", uid, [&](const Json& o) { out.push_back(o["metadata"]["name"]); })
            .ok());
    return out;
  };

  ASSERT_TRUE(store_->BeginGroup().ok());
  Json b = *store_->Get({"PyTorchJob", "default", "b"});
  b["spec"]["changed"] = true;
  ASSERT_TRUE(store_->Update(b).ok());
  ASSERT_TRUE(store_->Delete({"PyTorchJob", "default", "a"}).ok());
  ASSERT_TRUE(store_->Create(Job("c")).ok());
  ASSERT_TRUE(store_->Create(OwnedPod("new", "u1")).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "default", "kept"}).ok());
  ASSERT_TRUE(store_->AppendObservations("default/t", {{2, "loss", "0.25"}}, "", 0).ok());

  // The store itself reads its writes; the committed view does not.
  EXPECT_THAT(names(*store_, "PyTorchJob"), ::testing::ElementsAre("b", "c"));
  EXPECT_THAT(names(committed, "PyTorchJob"), ::testing::ElementsAre("a", "b"));
  EXPECT_FALSE(committed.Get({"PyTorchJob", "default", "b"})->at("spec").contains("changed"));
  EXPECT_EQ(committed.Get({"PyTorchJob", "default", "c"}).status().code(), StatusCode::kNotFound);
  EXPECT_THAT(owned(*store_, "u1"), ::testing::ElementsAre("new"));
  EXPECT_THAT(owned(committed, "u1"), ::testing::ElementsAre("kept"));
  EXPECT_EQ(committed.CurrentResourceVersion(), 3);
  EXPECT_EQ(committed.List("PyTorchJob", "default")->resource_version, 3);
  EXPECT_EQ(committed.ListObservations("default/t")->size(), 1u);
  EXPECT_EQ(store_->ListObservations("default/t")->size(), 2u);

  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_THAT(names(committed, "PyTorchJob"), ::testing::ElementsAre("b", "c"));
  EXPECT_TRUE(committed.Get({"PyTorchJob", "default", "b"})->at("spec").contains("changed"));
  EXPECT_THAT(owned(committed, "u1"), ::testing::ElementsAre("new"));
  EXPECT_EQ(committed.CurrentResourceVersion(), store_->CurrentResourceVersion());
  EXPECT_EQ(committed.ListObservations("default/t")->size(), 2u);
}

TEST_F(SqliteStoreFileTest, AFullDiskRefusesWritesKeepsMemoryAsTheDiskAndPasses) {
  auto opened = Open(testing::FullDiskVfs::Name());
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  SqliteStore& store = **opened;
  ASSERT_TRUE(store.Create(Job("a")).ok());

  testing::FullDiskVfs::SetFull(true);
  Result<Json> alone = store.Create(Job("b"));
  EXPECT_EQ(alone.status().code(), StatusCode::kInternal);
  EXPECT_THAT(alone.status().message(),
              ::testing::StartsWith("the disk is full: nothing was written"));
  // A group's writes are taken back, on disk and in memory, when its
  // commit fails.
  ASSERT_TRUE(store.BeginGroup().ok());
  ASSERT_TRUE(store.Create(Job("c")).ok());
  ASSERT_TRUE(store.Create(OwnedPod("p", "u9")).ok());
  ASSERT_TRUE(store.Delete({"PyTorchJob", "default", "a"}).ok());
  Status committed = store.CommitGroup();
  EXPECT_THAT(committed.message(), ::testing::StartsWith("the disk is full: nothing was written"));
  EXPECT_EQ(store.CurrentResourceVersion(), 1);
  EXPECT_TRUE(store.Get({"PyTorchJob", "default", "a"}).ok());
  EXPECT_EQ(store.Get({"PyTorchJob", "default", "b"}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.Get({"PyTorchJob", "default", "c"}).status().code(), StatusCode::kNotFound);
  EXPECT_THAT(OwnedNames(store, "u9"), ::testing::IsEmpty());

  // With room again, the same writes succeed, and the disk agrees.
  testing::FullDiskVfs::SetFull(false);
  Result<Json> b = store.Create(Job("b"));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)["metadata"]["resourceVersion"], "2");
  opened->reset();
  auto reopened = Open();
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ((*reopened)->List("PyTorchJob", "")->items.size(), 2u);
}

}  // namespace
}  // namespace trainyard::store
