// The store's label and field indexes (sqlite_index.cc): a selected list
// reads only what it returns, and the indexes follow every write, a
// group's before-images and a reopened file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

using api::Json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Json LabeledPod(const std::string& name, const std::string& ns, const Json& labels) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
          {"spec", Json::object()}};
}

// The names `query` selects from `reader`, and how many objects the store
// read for them.
struct Selected {
  std::vector<std::string> names;
  int64_t examined = 0;
};

Selected Select(const ObjectReader& reader, const SqliteStore& store, const ListQuery& query,
                size_t limit = 0) {
  Selected out;
  int64_t before = store.objects_examined();
  Result<int64_t> version = reader.ScanWhere(query, [&](const Json& o) {
    out.names.push_back(o["metadata"]["name"]);
    return limit == 0 || out.names.size() < limit;
  });
  EXPECT_TRUE(version.ok()) << version.status().ToString();
  out.examined = store.objects_examined() - before;
  return out;
}

class SqliteIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = SqliteStore::Open({});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
  }
  void Create(const Json& object) {
    Result<Json> created = store_->Create(object);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  std::unique_ptr<SqliteStore> store_;
};

TEST_F(SqliteIndexTest, ALabelSelectedListReadsOnlyTheObjectsItReturns) {
  for (int i = 0; i < 1000; ++i) {
    std::string owner = i % 100 == 7 ? "x" : "other-" + std::to_string(i);
    Create(LabeledPod(fmt::format("p{:04}", i), "a", {{"owner", owner}, {"tier", "web"}}));
  }
  Create(LabeledPod("elsewhere", "b", {{"owner", "x"}}));
  Selected x =
      Select(*store_, *store_, {.kind = "Pod", .namespace_ = "a", .labels = {{"owner", "x"}}});
  EXPECT_THAT(x.names, ElementsAre("p0007", "p0107", "p0207", "p0307", "p0407", "p0507", "p0607",
                                   "p0707", "p0807", "p0907"));
  EXPECT_EQ(x.examined, 10);
  // Every namespace; the shortest of two equalities' lists is read.
  Selected both =
      Select(*store_, *store_, {.kind = "Pod", .labels = {{"tier", "web"}, {"owner", "x"}}});
  EXPECT_EQ(both.names.size(), 10u);
  EXPECT_EQ(both.examined, 11);  // b/elsewhere is read, and has no tier
  // A page stops where it is full, and the next goes on after its last key.
  Selected page =
      Select(*store_, *store_, {.kind = "Pod", .namespace_ = "a", .labels = {{"owner", "x"}}}, 3);
  EXPECT_THAT(page.names, ElementsAre("p0007", "p0107", "p0207"));
  EXPECT_EQ(page.examined, 3);
  Selected rest = Select(
      *store_, *store_,
      {.kind = "Pod", .namespace_ = "a", .labels = {{"owner", "x"}}, .after = {"a", "p0207"}}, 2);
  EXPECT_THAT(rest.names, ElementsAre("p0307", "p0407"));
  EXPECT_EQ(rest.examined, 2);
  // A value nobody has reads nothing; no equality reads the range.
  EXPECT_EQ(Select(*store_, *store_, {.kind = "Pod", .labels = {{"owner", "y"}}}).examined, 0);
  EXPECT_EQ(Select(*store_, *store_, {.kind = "Pod", .namespace_ = "b"}).examined, 1);
}

TEST_F(SqliteIndexTest, FieldsAreReadFromTheirIndexOrByName) {
  for (int i = 0; i < 50; ++i) {
    Json pod = LabeledPod(fmt::format("p{:02}", i), "a", Json::object());
    if (i % 10 == 0) pod["spec"]["nodeName"] = "n1";
    pod["status"]["phase"] = i < 45 ? "Succeeded" : "Running";
    Create(pod);
  }
  Selected on_node = Select(*store_, *store_, {.kind = "Pod", .fields = {{"spec.nodeName", "n1"}}});
  EXPECT_THAT(on_node.names, ElementsAre("p00", "p10", "p20", "p30", "p40"));
  EXPECT_EQ(on_node.examined, 5);
  Selected running =
      Select(*store_, *store_, {.kind = "Pod", .fields = {{"status.phase", "Running"}}});
  EXPECT_EQ(running.names.size(), 5u);
  EXPECT_EQ(running.examined, 5);
  Selected named = Select(*store_, *store_,
                          {.kind = "Pod", .namespace_ = "a", .fields = {{"metadata.name", "p17"}}});
  EXPECT_THAT(named.names, ElementsAre("p17"));
  EXPECT_EQ(named.examined, 1);
  // No node: the empty value is not indexed, so the range is read.
  Selected unbound = Select(*store_, *store_, {.kind = "Pod", .fields = {{"spec.nodeName", ""}}});
  EXPECT_EQ(unbound.names.size(), 45u);
  EXPECT_EQ(unbound.examined, 50);
}

TEST_F(SqliteIndexTest, IndexesFollowUpdatesStatusWritesAndDeletes) {
  Create(LabeledPod("p", "a", {{"app", "old"}}));
  Create(LabeledPod("q", "a", {{"app", "old"}}));
  Json relabeled = LabeledPod("p", "a", {{"app", "new"}});
  ASSERT_TRUE(store_->Update(relabeled).ok());
  Json status = LabeledPod("q", "a", {{"app", "old"}});
  status["status"]["phase"] = "Failed";
  ASSERT_TRUE(store_->UpdateStatus(status).ok());
  ListQuery old_app{.kind = "Pod", .labels = {{"app", "old"}}};
  EXPECT_THAT(Select(*store_, *store_, old_app).names, ElementsAre("q"));
  EXPECT_THAT(Select(*store_, *store_, {.kind = "Pod", .labels = {{"app", "new"}}}).names,
              ElementsAre("p"));
  EXPECT_THAT(
      Select(*store_, *store_, {.kind = "Pod", .fields = {{"status.phase", "Failed"}}}).names,
      ElementsAre("q"));
  ASSERT_TRUE(store_->Delete({"Pod", "a", "q"}).ok());
  EXPECT_THAT(Select(*store_, *store_, old_app).names, IsEmpty());
  EXPECT_EQ(Select(*store_, *store_, old_app).examined, 0);
}

TEST_F(SqliteIndexTest, CommittedReadsSeeThroughAnOpenGroup) {
  Create(LabeledPod("kept", "a", {{"app", "x"}}));
  Create(LabeledPod("relabeled", "a", {{"app", "x"}}));
  Create(LabeledPod("deleted", "a", {{"app", "x"}}));
  ASSERT_TRUE(store_->BeginGroup().ok());
  Create(LabeledPod("created", "a", {{"app", "x"}}));
  ASSERT_TRUE(store_->Update(LabeledPod("relabeled", "a", {{"app", "y"}})).ok());
  ASSERT_TRUE(store_->Delete({"Pod", "a", "deleted"}).ok());
  ListQuery x{.kind = "Pod", .labels = {{"app", "x"}}};
  EXPECT_THAT(Select(*store_, *store_, x).names, ElementsAre("created", "kept"));
  EXPECT_THAT(Select(store_->committed(), *store_, x).names,
              ElementsAre("deleted", "kept", "relabeled"));
  EXPECT_THAT(Select(store_->committed(), *store_, {.kind = "Pod", .labels = {{"app", "y"}}}).names,
              IsEmpty());
  ASSERT_TRUE(store_->CommitGroup().ok());
  EXPECT_THAT(Select(store_->committed(), *store_, x).names, ElementsAre("created", "kept"));
}

TEST(SqliteIndexFileTest, AReopenedStoreIndexesWhatItLoads) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("trainyard-index-test-" + std::to_string(getpid()) + ".db");
  {
    auto store = SqliteStore::Open({.path = path.string()});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Create(LabeledPod("p", "a", {{"app", "x"}})).ok());
    ASSERT_TRUE((*store)->Create(LabeledPod("q", "a", {{"app", "z"}})).ok());
  }
  auto reopened = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  Selected x = Select(**reopened, **reopened, {.kind = "Pod", .labels = {{"app", "x"}}});
  EXPECT_THAT(x.names, ElementsAre("p"));
  EXPECT_EQ(x.examined, 1);
  reopened->reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
}

}  // namespace
}  // namespace trainyard::store
