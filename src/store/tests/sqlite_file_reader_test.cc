// Another process's view of a store file: what is committed, never an open
// group's writes, through the same ObjectReader interface as the store.
#include "store/sqlite_file_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "store/sqlite_store.h"

namespace trainyard::store {
namespace {

using ::testing::ElementsAre;

api::Json Pod(const std::string& ns, const std::string& name, const std::string& owner = "") {
  api::Json pod = {
      {"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (!owner.empty()) {
    pod["metadata"]["ownerReferences"] = {{{"kind", "Job"}, {"name", "j"}, {"uid", owner}}};
  }
  return pod;
}

std::vector<std::string> Names(const std::vector<api::Json>& items) {
  std::vector<std::string> names;
  for (const api::Json& item : items) names.push_back(api::StringAt(item, {"metadata", "name"}));
  return names;
}

TEST(SqliteFileReaderTest, ReadsWhatTheOwnerCommittedAndNothingElse) {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("trainyard-file-reader-" + std::to_string(getpid()) + ".db");
  std::filesystem::remove(path);
  auto store = SqliteStore::Open({.path = path.string()});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Create(Pod("b", "p2", "owner-uid")).ok());
  ASSERT_TRUE((*store)->Create(Pod("a", "p1")).ok());
  ASSERT_TRUE((*store)->BeginGroup().ok());
  ASSERT_TRUE((*store)->Create(Pod("a", "open")).ok());  // not committed yet

  SqliteFileReader reader(path.string());
  EXPECT_TRUE(reader.Get({"Pod", "a", "p1"}).ok());
  EXPECT_EQ(reader.Get({"Pod", "a", "open"}).status().code(), StatusCode::kNotFound);
  Result<ObjectReader::ListResult> all = reader.List("Pod", "");
  ASSERT_TRUE(all.ok());
  EXPECT_THAT(Names(all->items), ElementsAre("p1", "p2"));  // by namespace, then name
  EXPECT_EQ(all->resource_version, 2);
  std::vector<api::Json> owned;
  ASSERT_TRUE(
      reader.ScanOwnedBy("Pod", "owner-uid", [&](const api::Json& p) { owned.push_back(p); }).ok());
  EXPECT_THAT(Names(owned), ElementsAre("p2"));

  ASSERT_TRUE((*store)->CommitGroup().ok());
  EXPECT_TRUE(reader.Get({"Pod", "a", "open"}).ok());
  EXPECT_EQ(SqliteFileReader("/nonexistent-dir/state.db").Get({"Pod", "a", "p1"}).status().code(),
            StatusCode::kNotFound);
  store->reset();
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace trainyard::store
