#include "server/selectors.h"

#include <gtest/gtest.h>

namespace trainyard::server {
namespace {

api::Json Pod(api::Json labels, std::string phase) {
  return {{"metadata", {{"name", "p"}, {"labels", std::move(labels)}}},
          {"status", {{"phase", std::move(phase)}}}};
}

TEST(SelectorsTest, LabelSelectorsOfEveryForm) {
  api::Json pod = Pod({{"app", "mnist"}, {"role", "worker"}}, "Running");
  auto matches = [&](const char* text) { return Selector::ParseLabels(text)->Matches(pod); };
  EXPECT_TRUE(matches(""));
  EXPECT_TRUE(matches("app=mnist"));
  EXPECT_TRUE(matches("app==mnist,role!=master"));
  EXPECT_FALSE(matches("app=mnist,role=master"));
  EXPECT_TRUE(matches("role in (worker, master)"));
  EXPECT_FALSE(matches("role notin (worker)"));
  EXPECT_TRUE(matches("app,!canary"));
  EXPECT_FALSE(matches("canary"));
  EXPECT_EQ(Selector::ParseLabels("role in worker").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Selector::ParseLabels("=x").status().code(), StatusCode::kInvalidArgument);
}

TEST(SelectorsTest, FieldSelectorsReadDottedPaths) {
  api::Json pod = Pod(api::Json::object(), "Running");
  EXPECT_TRUE(Selector::ParseFields("metadata.name=p,status.phase!=Failed")->Matches(pod));
  EXPECT_FALSE(Selector::ParseFields("status.phase=Failed")->Matches(pod));
  EXPECT_TRUE(Selector::ParseFields("spec.nodeName=")->Matches(pod));  // absent reads as ""
  EXPECT_EQ(Selector::ParseFields("status.phase").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trainyard::server
