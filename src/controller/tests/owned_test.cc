// The garbage collector's rule, as Kubernetes': a dependent goes with its
// last owner, not before.
#include "controller/owned.h"

#include <gtest/gtest.h>

#include "store/sqlite_store.h"

namespace trainyard::controller {
namespace {

api::Json Map(const std::string& name, const std::vector<std::string>& owner_uids = {}) {
  api::Json map = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", name}, {"namespace", "default"}}}};
  int i = 0;
  for (const std::string& uid : owner_uids) {
    map["metadata"]["ownerReferences"].push_back({{"apiVersion", "v1"},
                                                  {"kind", "ConfigMap"},
                                                  {"name", "owner" + std::to_string(i++)},
                                                  {"uid", uid}});
  }
  return map;
}

TEST(OwnedTest, ADependentGoesWithItsLastOwner) {
  FakeClock clock;
  auto store = std::move(*store::SqliteStore::Open({.clock = &clock}));
  std::string a = (*store->Create(Map("owner0")))["metadata"]["uid"];
  std::string b = (*store->Create(Map("owner1")))["metadata"]["uid"];
  ASSERT_TRUE(store->Create(Map("shared", {a, b})).ok());
  ASSERT_TRUE(store->Create(Map("only-a", {a})).ok());

  ASSERT_TRUE(store->Delete({"ConfigMap", "default", "owner0"}).ok());
  ASSERT_TRUE(DeleteDependents(*store, a).ok());
  EXPECT_FALSE(store->Get({"ConfigMap", "default", "only-a"}).ok());
  EXPECT_TRUE(store->Get({"ConfigMap", "default", "shared"}).ok()) << "owner1 still lives";
  EXPECT_EQ(*MissingOwners(*store), std::set<std::string>{a});

  ASSERT_TRUE(store->Delete({"ConfigMap", "default", "owner1"}).ok());
  ASSERT_TRUE(DeleteDependents(*store, b).ok());
  EXPECT_FALSE(store->Get({"ConfigMap", "default", "shared"}).ok());
  EXPECT_TRUE(MissingOwners(*store)->empty());
}

}  // namespace
}  // namespace trainyard::controller
