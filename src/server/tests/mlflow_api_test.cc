// The tracking API as MLflow's client uses it, request and answer shapes
// from MLflow's REST documentation, over a real (in-memory) store.
#include "server/mlflow_api.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server/auth.h"
#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class MlflowApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok());
    clock_.Set(TimePoint(std::chrono::seconds(1'700'000'000)));
  }

  ApiResponse Call(const std::string& method, const std::string& path, const std::string& body,
                   std::multimap<std::string, std::string> query = {},
                   const std::string& token = "") {
    return handler_.Handle({.method = method,
                            .path = "/api/2.0/mlflow/" + path,
                            .query = std::move(query),
                            .content_type = "application/json",
                            .authorization = token.empty() ? "" : "Bearer " + token,
                            .body = body});
  }
  api::Json Post(const std::string& path, const api::Json& body, int want = 200) {
    ApiResponse r = Call("POST", path, body.dump());
    EXPECT_EQ(r.code, want) << path << ": " << r.body;
    return api::Json::parse(r.body);
  }
  api::Json Get(const std::string& path, std::multimap<std::string, std::string> query,
                int want = 200) {
    ApiResponse r = Call("GET", path, "", std::move(query));
    EXPECT_EQ(r.code, want) << path << ": " << r.body;
    return api::Json::parse(r.body);
  }
  std::vector<api::Json> History(const std::string& run, const std::string& key) {
    api::Json h = Get("metrics/get-history", {{"run_id", run}, {"metric_key", key}});
    return h.value("metrics", std::vector<api::Json>{});
  }

  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

TEST_F(MlflowApiTest, ExperimentZeroExistsAndMissingObjectsAre404) {
  api::Json zero = Get("experiments/get", {{"experiment_id", "0"}});
  EXPECT_EQ(zero["experiment"]["name"], "Default");
  EXPECT_EQ(zero["experiment"]["lifecycle_stage"], "active");
  EXPECT_EQ(Get("experiments/get-by-name",
                {{"experiment_name", "Default"}})["experiment"]["experiment_id"],
            "0");
  // The client reads a 404 RESOURCE_DOES_NOT_EXIST as "none", and creates it.
  api::Json missing = Get("experiments/get-by-name", {{"experiment_name", "mnist"}}, 404);
  EXPECT_EQ(missing["error_code"], "RESOURCE_DOES_NOT_EXIST");
  EXPECT_EQ(Get("runs/get", {{"run_id", "0123456789abcdef0123456789abcdef"}}, 404)["error_code"],
            "RESOURCE_DOES_NOT_EXIST");
  EXPECT_EQ(Get("experiments/get", {{"experiment_id", "7"}}, 404)["error_code"],
            "RESOURCE_DOES_NOT_EXIST");
}

TEST_F(MlflowApiTest, AClientsRunTakesMetricsParamsAndTagsAsMlflowsClientSendsThem) {
  api::Json created = Post("experiments/create", {{"name", "mnist"}});
  EXPECT_EQ(created["experiment_id"], "1");
  EXPECT_EQ(Post("experiments/create", {{"name", "mnist"}}, 400)["error_code"],
            "RESOURCE_ALREADY_EXISTS");
  // int64 fields as strings, as protobuf's JSON writes them.
  api::Json run = Post("runs/create", {{"experiment_id", "1"},
                                       {"start_time", "1700000000000"},
                                       {"run_name", "lr-0.1"},
                                       {"tags", {{{"key", "team"}, {"value", "vision"}}}}})["run"];
  std::string id = run["info"]["run_id"];
  EXPECT_THAT(id, MatchesRegex("[0-9a-f]{32}"));
  EXPECT_EQ(run["info"]["run_uuid"], id);
  EXPECT_EQ(run["info"]["status"], "RUNNING");
  EXPECT_EQ(run["info"]["start_time"], 1700000000000);
  EXPECT_EQ(run["info"]["experiment_id"], "1");
  Post(
      "runs/log-metric",
      {{"run_id", id}, {"key", "loss"}, {"value", 0.5}, {"timestamp", 1700000001000}, {"step", 0}});
  Post("runs/log-metric", {{"run_id", id},
                           {"key", "loss"},
                           {"value", "NaN"},
                           {"timestamp", "1700000002000"},
                           {"step", "1"}});
  Post("runs/log-metric", {{"run_uuid", id}, {"key", "loss"}, {"value", 0.25}, {"step", 2}});
  Post("runs/log-parameter", {{"run_id", id}, {"key", "lr"}, {"value", "0.1"}});
  Post("runs/log-parameter", {{"run_id", id}, {"key", "lr"}, {"value", "0.1"}});  // the same: fine
  Post("runs/set-tag", {{"run_id", id}, {"key", "stage"}, {"value", "tuning"}});
  Post("runs/log-batch",
       {{"run_id", id},
        {"metrics",
         {{{"key", "acc"}, {"value", "Infinity"}, {"timestamp", 1700000003000}, {"step", 2}}}},
        {"params", {{{"key", "epochs"}, {"value", "3"}}}},
        {"tags", api::Json::array()}});
  std::vector<api::Json> loss = History(id, "loss");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[0]["value"], 0.5);
  EXPECT_EQ(loss[0]["timestamp"], 1700000001000);
  EXPECT_EQ(loss[1]["value"], "NaN");
  EXPECT_EQ(loss[1]["step"], 1);
  EXPECT_EQ(loss[2]["timestamp"], 1700000000000);  // none given: when it came
  api::Json got = Get("runs/get", {{"run_id", id}})["run"];
  EXPECT_EQ(got["data"]["metrics"].size(), 2u);
  EXPECT_EQ(got["data"]["metrics"][0],
            (api::Json{
                {"key", "acc"}, {"value", "Infinity"}, {"timestamp", 1700000003000}, {"step", 2}}));
  EXPECT_EQ(got["data"]["metrics"][1]["value"], 0.25);  // the latest loss
  EXPECT_EQ(got["data"]["params"],
            (api::Json{{{"key", "lr"}, {"value", "0.1"}}, {{"key", "epochs"}, {"value", "3"}}}));
  EXPECT_THAT(got["data"]["tags"].dump(),
              HasSubstr(R"({"key":"mlflow.runName","value":"lr-0.1"})"));
  EXPECT_THAT(got["data"]["tags"].dump(), HasSubstr(R"({"key":"stage","value":"tuning"})"));
  api::Json info =
      Post("runs/update",
           {{"run_id", id}, {"status", "FINISHED"}, {"end_time", 1700000009000}})["run_info"];
  EXPECT_EQ(info["status"], "FINISHED");
  EXPECT_EQ(info["end_time"], 1700000009000);
  api::Json found = Post("runs/search", {{"experiment_ids", {"1"}}, {"max_results", 10}});
  ASSERT_EQ(found["runs"].size(), 1u);
  EXPECT_EQ(found["runs"][0]["info"]["run_id"], id);
  EXPECT_TRUE(Post("runs/search", {{"experiment_ids", {"0"}}})["runs"].empty());
  // Deleted: out of searches, and takes nothing more.
  Post("runs/delete", {{"run_id", id}});
  EXPECT_TRUE(Post("runs/search", {{"experiment_ids", {"1"}}})["runs"].empty());
  EXPECT_EQ(
      Post("runs/search", {{"experiment_ids", {"1"}}, {"run_view_type", "ALL"}})["runs"].size(),
      1u);
  EXPECT_EQ(
      Post("runs/log-metric", {{"run_id", id}, {"key", "loss"}, {"value", 1}}, 400)["error_code"],
      "INVALID_PARAMETER_VALUE");
  Post("runs/restore", {{"run_id", id}});
  Post("runs/log-metric", {{"run_id", id}, {"key", "loss"}, {"value", 1}});
}

TEST_F(MlflowApiTest, AJobIsARunAlreadyAndWhatItLogsIsTheJobsOwnMetrics) {
  ASSERT_EQ(handler_
                .Handle({.method = "POST",
                         .path = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs",
                         .content_type = "application/json",
                         .body = kTestJob})
                .code,
            201);
  // What a replica of it is given as MLFLOW_RUN_ID: the job, by name.
  api::Json run = Get("runs/get", {{"run_id", "pytorchjob-mnist"}})["run"];
  EXPECT_EQ(run["info"]["run_name"], "mnist");
  EXPECT_EQ(run["info"]["experiment_id"], "0");
  EXPECT_EQ(run["info"]["status"], "RUNNING");
  EXPECT_EQ(run["info"]["lifecycle_stage"], "active");
  // What it was run with: its master's command (and literal env).
  EXPECT_EQ(run["data"]["params"], (api::Json{{{"key", "trainyard.command"}, {"value", "true"}}}));
  // mlflow.start_run() with MLFLOW_RUN_ID: runs/get, then runs/update.
  Post("runs/update", {{"run_id", "pytorchjob-mnist"}, {"status", "RUNNING"}});
  Post("runs/log-metric", {{"run_id", "pytorchjob-mnist"},
                           {"key", "loss"},
                           {"value", 0.75},
                           {"timestamp", 1700000001000},
                           {"step", 10}});
  Post("runs/log-parameter", {{"run_id", "pytorchjob-mnist"}, {"key", "lr"}, {"value", "0.01"}});
  api::Json log = api::Json::parse(
      handler_
          .Handle({.method = "GET",
                   .path = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/mnist/"
                           "observations"})
          .body);
  ASSERT_EQ(log["metricLogs"].size(), 1u);
  EXPECT_EQ(log["metricLogs"][0]["metric"]["name"], "loss");
  EXPECT_EQ(History("pytorchjob-mnist", "loss")[0]["step"], 10);
  // As the dashboard draws it: series by step.
  const std::string observations =
      "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/mnist/observations";
  api::Json series = api::Json::parse(
      handler_.Handle({.method = "GET", .path = observations, .query = {{"series", "true"}}}).body);
  EXPECT_EQ(series["series"][0]["step"], (api::Json{10}));
  EXPECT_EQ(handler_
                .Handle({.method = "GET",
                         .path = observations,
                         .query = {{"series", "true"}, {"points", "0"}}})
                .code,
            400);
  EXPECT_EQ(Get("runs/get", {{"run_id", "pytorchjob-mnist"}})["run"]["data"]["params"][0]["key"],
            "lr");
  // A replica killed never ends its run: the job's state does.
  api::Json failed = *backend_.store().Get({"PyTorchJob", "default", "mnist"});
  failed["status"]["conditions"] = {
      {{"type", "Failed"}, {"status", "True"}, {"lastTransitionTime", "2023-11-14T22:13:30Z"}}};
  ASSERT_TRUE(backend_.writable().UpdateStatus(failed).ok());
  api::Json ended = Get("runs/get", {{"run_id", "pytorchjob-mnist"}})["run"]["info"];
  EXPECT_EQ(ended["status"], "FAILED");
  EXPECT_EQ(ended["end_time"], 1700000010000);  // when the job failed
  // A new job of the same name, its run's record left from the old one (as
  // when both happen before the garbage collector runs): a run of its own.
  ASSERT_TRUE(backend_.writable().Delete({"PyTorchJob", "default", "mnist"}).ok());
  api::Json again = api::Json::parse(kTestJob);
  again["metadata"]["namespace"] = "default";
  ASSERT_TRUE(backend_.writable().Create(again).ok());
  api::Json fresh = Get("runs/get", {{"run_id", "pytorchjob-mnist"}})["run"];
  EXPECT_THAT(fresh["data"]["params"].dump(), ::testing::Not(HasSubstr("\"lr\"")));
  EXPECT_EQ(fresh["info"]["status"], "RUNNING");
  Post("runs/log-parameter", {{"run_id", "pytorchjob-mnist"}, {"key", "lr"}, {"value", "0.5"}});
  // Another kind's run of the same name is no run.
  EXPECT_EQ(Get("runs/get", {{"run_id", "tfjob-mnist"}}, 404)["error_code"],
            "RESOURCE_DOES_NOT_EXIST");
  // A namespace's tracking API at /mlflow/<namespace>: none of this is
  // another namespace's.
  ApiResponse elsewhere = handler_.Handle({.method = "GET",
                                           .path = "/mlflow/team-b/api/2.0/mlflow/runs/get",
                                           .query = {{"run_id", "pytorchjob-mnist"}}});
  EXPECT_EQ(elsewhere.code, 404);
}

TEST_F(MlflowApiTest, ABadRequestGets4xxWithTheFieldAndWritesNothing) {
  std::string id = Post("runs/create", {{"experiment_id", "0"}})["run"]["info"]["run_id"];
  // One bad metric in a batch: none of it is kept.
  api::Json bad = Post("runs/log-batch",
                       {{"run_id", id},
                        {"metrics",
                         {{{"key", "loss"}, {"value", 0.5}, {"timestamp", 1}},
                          {{"key", "loss"}, {"value", "low"}, {"timestamp", 2}}}}},
                       400);
  EXPECT_EQ(bad["error_code"], "INVALID_PARAMETER_VALUE");
  EXPECT_THAT(bad["message"].get<std::string>(), HasSubstr("metrics[1].value"));
  EXPECT_TRUE(History(id, "loss").empty());
  Post("runs/log-parameter", {{"run_id", id}, {"key", "lr"}, {"value", "0.1"}});
  api::Json changed =
      Post("runs/log-parameter", {{"run_id", id}, {"key", "lr"}, {"value", "0.2"}}, 400);
  EXPECT_THAT(changed["message"].get<std::string>(),
              HasSubstr("Changing param values is not allowed"));
  EXPECT_EQ(
      Post("runs/log-metric", {{"run_id", id}, {"key", "../x"}, {"value", 1}}, 400)["error_code"],
      "INVALID_PARAMETER_VALUE");
  EXPECT_THAT(
      Post("runs/log-metric", {{"run_id", id}, {"key", "loss"}}, 400)["message"].get<std::string>(),
      HasSubstr("metric.value"));
  EXPECT_THAT(
      Post("runs/log-metric", {{"key", "loss"}, {"value", 1}}, 400)["message"].get<std::string>(),
      HasSubstr("run_id"));
  EXPECT_EQ(Post("runs/log-metric",
                 {{"run_id", id}, {"key", "loss"}, {"value", 1}, {"timestamp", "soon"}},
                 400)["error_code"],
            "INVALID_PARAMETER_VALUE");
  EXPECT_EQ(Post("runs/update", {{"run_id", id}, {"status", "DONE"}}, 400)["error_code"],
            "INVALID_PARAMETER_VALUE");
  EXPECT_THAT(Post("runs/search", {{"experiment_ids", {"0"}}, {"filter", "metrics.loss < 1"}},
                   400)["message"]
                  .get<std::string>(),
              HasSubstr("filter"));
  EXPECT_EQ(Post("runs/search", {{"experiment_ids", {"0"}}, {"max_results", 0}}, 400)["error_code"],
            "INVALID_PARAMETER_VALUE");
  // An int64 past its range, or with a fraction, is refused, never
  // wrapped round, cut or rounded into another step.
  for (const char* step :
       {"9223372036854775808", "18446744073709551615", "\"99999999999999999999\"", "1.5", "1e30"}) {
    std::string body =
        fmt::format(R"({{"run_id": "{}", "key": "loss", "value": 1, "step": {}}})", id, step);
    EXPECT_EQ(Call("POST", "runs/log-metric", body).code, 400) << step;
  }
  // MLflow's limits count characters: 8,000 of them in a tag is fine,
  // however many bytes each takes.
  std::string wide;
  for (int i = 0; i < 8000; ++i) wide += "\xc3\xa9";
  Post("runs/set-tag", {{"run_id", id}, {"key", "note"}, {"value", wide}});
  Post("runs/set-tag", {{"run_id", id}, {"key", "note2"}, {"value", wide + "x"}}, 400);
  EXPECT_EQ(Call("POST", "runs/log-metric", "{not json").code, 400);
  EXPECT_EQ(Call("POST", "runs/log-metric", "[1]").code, 400);
  EXPECT_EQ(Call("GET", "runs/log-metric", "").code, 405);
  api::Json unknown = api::Json::parse(Call("POST", "model-versions/create", "{}").body);
  EXPECT_EQ(unknown["error_code"], "ENDPOINT_NOT_FOUND");
  // None of those wrote.
  EXPECT_EQ(History(id, "loss").size(), 0u);
  EXPECT_EQ(Get("runs/get", {{"run_id", id}})["run"]["info"]["status"], "RUNNING");
}

TEST(MlflowAuthTest, ANamespacesTokenReachesItsTrackingAndAJobsReplicasTheirOwnRunAlone) {
  FakeClock clock;
  FakeBackend backend{clock};
  Authorizer auth = *Authorizer::Parse(
      "alice-secret-1 alice default\n"
      "bob-secret-123 bob team-b\n");
  ApiHandler handler{backend, clock, &auth};
  ASSERT_TRUE(handler.EnsureDefaultNamespace().ok());
  auto call = [&](const std::string& path, const api::Json& body, const std::string& token) {
    return handler.Handle({.method = "POST",
                           .path = path,
                           .content_type = "application/json",
                           .authorization = token.empty() ? "" : "Bearer " + token,
                           .body = body.dump()});
  };
  ASSERT_EQ(call("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs", api::Json::parse(kTestJob),
                 "alice-secret-1")
                .code,
            201);
  std::string uid =
      api::StringAt(*backend.store().Get({"PyTorchJob", "default", "mnist"}), {"metadata", "uid"});
  const std::string log = "/api/2.0/mlflow/runs/log-metric";
  api::Json metric = {{"run_id", "pytorchjob-mnist"}, {"key", "loss"}, {"value", 1}};
  EXPECT_EQ(call(log, metric, "").code, 401);
  EXPECT_EQ(call(log, metric, "bob-secret-123").code, 403);
  EXPECT_EQ(call("/mlflow/default" + log, metric, "alice-secret-1").code, 200);
  // The job's uid, what its replicas are given, logs to its run alone.
  EXPECT_EQ(call(log, metric, uid).code, 200);
  EXPECT_EQ(call(log, {{"run_id", "pytorchjob-other"}, {"key", "loss"}, {"value", 1}}, uid).code,
            401);
  ApiResponse refused = call("/api/2.0/mlflow/runs/create", api::Json::object(), uid);
  EXPECT_EQ(refused.code, 401);
  EXPECT_EQ(api::Json::parse(refused.body)["error_code"], "UNAUTHENTICATED");
  EXPECT_EQ(api::Json::parse(call(log, metric, "bob-secret-123").body)["error_code"],
            "PERMISSION_DENIED");
  // mlflow.set_experiment("mnist") in the job's code, then start_run with
  // the run it was given: the client checks the run is in that experiment.
  ApiResponse created = call("/api/2.0/mlflow/experiments/create", {{"name", "mnist"}}, uid);
  ASSERT_EQ(created.code, 200) << created.body;
  std::string experiment = api::Json::parse(created.body)["experiment_id"];
  ApiResponse run = handler.Handle({.method = "GET",
                                    .path = "/api/2.0/mlflow/runs/get",
                                    .query = {{"run_id", "pytorchjob-mnist"}},
                                    .authorization = "Bearer " + uid});
  ASSERT_EQ(run.code, 200) << run.body;
  EXPECT_EQ(api::Json::parse(run.body)["run"]["info"]["experiment_id"], experiment);
}

}  // namespace
}  // namespace trainyard::server
