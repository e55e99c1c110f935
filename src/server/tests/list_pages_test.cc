// Lists a page at a time through the store's indexes (list_pages.cc,
// store/sqlite_index.cc): a selected page reads only what it returns, and
// pages are cut in key order whatever the source's order.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

class ListPagesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok()); }
  ApiResponse Get(std::string path, std::multimap<std::string, std::string> query) {
    return handler_.Handle({.method = "GET", .path = std::move(path), .query = std::move(query)});
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }

  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

// Nodes of an inventory are paged in name order, whatever the inventory's.
TEST_F(ListPagesTest, InventoryNodesArePagedInNameOrder) {
  backend_.node_names = {"n2", "n1", "n3"};
  std::vector<std::string> seen;
  std::string token;
  for (int pages = 0; pages < 5; ++pages) {
    std::multimap<std::string, std::string> query = {{"limit", "1"}};
    if (!token.empty()) query.emplace("continue", token);
    api::Json page = Body(Get("/api/v1/nodes", query));
    for (const api::Json& node : page["items"]) seen.push_back(node["metadata"]["name"]);
    token = page["metadata"].value("continue", "");
    if (token.empty()) break;
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"n1", "n2", "n3"}));
}

// What the load asks, each client its own objects by label, a page
// at a time: only they are read, however many others the namespace holds.
TEST_F(ListPagesTest, ALabelSelectedPageReadsOnlyTheObjectsItReturns) {
  const std::string maps = "/api/v1/namespaces/default/configmaps";
  for (int i = 0; i < 300; ++i) {
    api::Json map = {
        {"metadata",
         {{"name", fmt::format("m{:03}", i)}, {"labels", {{"client", std::to_string(i % 30)}}}}},
        {"data", {{"k", "v"}}}};
    ASSERT_EQ(handler_
                  .Handle({.method = "POST",
                           .path = maps,
                           .content_type = "application/json",
                           .body = map.dump()})
                  .code,
              201);
  }
  int64_t before = backend_.writable().objects_examined();
  api::Json page = Body(Get(maps, {{"labelSelector", "client=7"}, {"limit", "4"}}));
  ASSERT_EQ(page["items"].size(), 4u);
  EXPECT_EQ(page["items"][0]["metadata"]["name"], "m007");
  EXPECT_EQ(page["items"][3]["metadata"]["name"], "m097");
  // Five read: the page and the one that says there is more. A selected
  // list says no remainingItemCount, as kube-apiserver's does not.
  EXPECT_EQ(backend_.writable().objects_examined() - before, 5);
  EXPECT_FALSE(page["metadata"].contains("remainingItemCount"));
  std::string token = page["metadata"]["continue"];
  api::Json rest = Body(Get(maps, {{"labelSelector", "client=7,client!=8"}, {"continue", token}}));
  ASSERT_EQ(rest["items"].size(), 6u);
  EXPECT_EQ(rest["items"][0]["metadata"]["name"], "m127");
  EXPECT_EQ(rest["metadata"]["resourceVersion"], page["metadata"]["resourceVersion"]);
  EXPECT_FALSE(rest["metadata"].contains("continue"));
  // A field selector by name reads the one object.
  before = backend_.writable().objects_examined();
  api::Json named = Body(Get(maps, {{"fieldSelector", "metadata.name=m042"}}));
  ASSERT_EQ(named["items"].size(), 1u);
  EXPECT_EQ(backend_.writable().objects_examined() - before, 1);
  // Without a selector, the rest is counted, not copied.
  api::Json first = Body(Get(maps, {{"limit", "10"}}));
  EXPECT_EQ(first["metadata"]["remainingItemCount"], 290);
}

}  // namespace
}  // namespace trainyard::server
