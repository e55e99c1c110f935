// Trial conditions on job JSON: the GJSON paths Katib's defaults and
// examples use, and its rule for what counts as met.
#include "api/gjson.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

Json Job(const char* conditions) {
  return Json::parse(std::string(R"({"status": {"phase": "Running", "conditions": )") + conditions +
                     "}}");
}

constexpr char kSucceeded[] = R"(status.conditions.#(type=="Succeeded")#|#(status=="True")#)";
constexpr char kFailed[] = R"(status.conditions.#(type=="Failed")#|#(status=="True")#)";

TEST(GjsonTest, KatibDefaultConditions) {
  Json done = Job(R"([{"type": "Created", "status": "True"},
                      {"type": "Succeeded", "status": "True", "reason": "JobSucceeded",
                       "message": "all done"}])");
  ConditionMatch m = EvaluateJobCondition(done, kSucceeded);
  EXPECT_TRUE(m.matched);
  EXPECT_EQ(m.reason, "JobSucceeded");
  EXPECT_EQ(m.message, "all done");
  EXPECT_FALSE(EvaluateJobCondition(done, kFailed).matched);
  // The type matches but the status does not: an empty array is not met.
  Json not_yet = Job(R"([{"type": "Succeeded", "status": "False"}])");
  EXPECT_FALSE(EvaluateJobCondition(not_yet, kSucceeded).matched);
  EXPECT_FALSE(EvaluateJobCondition(Json::object(), kSucceeded).matched);
}

TEST(GjsonTest, ThisInAMultipathQueriesTheObjectItself) {
  // Argo's Workflow conditions in Katib's example.
  Json job = Json::parse(R"({"status": {"phase": "Succeeded"}})");
  EXPECT_TRUE(EvaluateJobCondition(job, R"(status.[@this].#(phase=="Succeeded")#)").matched);
  EXPECT_FALSE(EvaluateJobCondition(job, R"(status.[@this].#(phase=="Failed")#)").matched);
}

TEST(GjsonTest, PathsIndicesCountsAndComparisons) {
  Json doc = Json::parse(R"({"a": {"b": [{"n": 1, "s": "x"}, {"n": 5, "s": "y"}]}})");
  EXPECT_EQ(EvaluateGjson(doc, "a.b.#"), 2);
  EXPECT_EQ(EvaluateGjson(doc, "a.b.1.s"), "y");
  EXPECT_EQ(EvaluateGjson(doc, "a.b.#(n>2).s"), "y");
  EXPECT_EQ(EvaluateGjson(doc, "a.b.#(n<=5)#.s"), Json::parse(R"(["x", "y"])"));
  EXPECT_EQ(EvaluateGjson(doc, R"(a.b.#(s!="x")#|#)"), 1);
  EXPECT_TRUE(EvaluateGjson(doc, "a.c").is_null());
  EXPECT_TRUE(EvaluateGjson(doc, "a.b.#(n>9)").is_null());
  // A path on a scalar, or malformed, matches nothing rather than failing.
  EXPECT_FALSE(EvaluateJobCondition(doc, "a.b.0.n.x").matched);
  EXPECT_FALSE(EvaluateJobCondition(doc, "a..b").matched);
  EXPECT_FALSE(EvaluateJobCondition(doc, "a.b.#(n==").matched);
}

}  // namespace
}  // namespace trainyard::api
