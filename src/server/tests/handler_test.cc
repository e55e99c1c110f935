// The API without HTTP: requests straight into the handler, over a real
// (in-memory) store.
#include "server/handler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "common/tests/test_dir.h"
#include "server/auth.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

using ::testing::HasSubstr;

class HandlerTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok()); }

  ApiResponse Call(std::string method, std::string path, std::string body = "",
                   std::string content_type = "application/json",
                   std::multimap<std::string, std::string> query = {}, std::string accept = "") {
    return handler_.Handle({.method = std::move(method),
                            .path = std::move(path),
                            .query = std::move(query),
                            .content_type = std::move(content_type),
                            .accept = std::move(accept),
                            .body = std::move(body)});
  }
  static api::Json Body(const ApiResponse& r) { return api::Json::parse(r.body); }

  static constexpr const char* kJobs = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

TEST_F(HandlerTest, DiscoveryListsTheGroupsAndResources) {
  api::Json groups = Body(Call("GET", "/apis"));
  EXPECT_EQ(groups["kind"], "APIGroupList");
  std::map<std::string, std::string> preferred;
  for (const api::Json& g : groups["groups"]) {
    preferred[g["name"]] = g["preferredVersion"]["groupVersion"];
  }
  EXPECT_EQ(preferred["kubeflow.org"], "kubeflow.org/v1");
  // What operators elect a leader with, as every kube-apiserver serves it.
  EXPECT_EQ(preferred["coordination.k8s.io"], "coordination.k8s.io/v1");
  api::Json resources = Body(Call("GET", "/apis/kubeflow.org/v1"));
  std::vector<std::string> names;
  for (const api::Json& r : resources["resources"]) names.push_back(r["name"]);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"pytorchjobs", "pytorchjobs/status", "tfjobs",
                                              "xgboostjobs", "mpijobs", "paddlejobs", "jaxjobs"}));
  api::Json leases = Body(Call("GET", "/apis/coordination.k8s.io/v1"));
  EXPECT_EQ(leases["resources"][0]["name"], "leases");
  api::Json core = Body(Call("GET", "/api/v1"));
  EXPECT_EQ(core["groupVersion"], "v1");
  EXPECT_EQ(Call("GET", "/apis/nothing.io/v1").code, 404);
}

TEST_F(HandlerTest, TheDashboardIsServedToBrowsersAndItsModulesAreEmbedded) {
  ApiResponse page = Call("GET", "/", "", "", {}, "text/html,application/xhtml+xml");
  EXPECT_EQ(page.code, 200);
  EXPECT_THAT(page.content_type, HasSubstr("text/html"));
  EXPECT_THAT(page.body, HasSubstr("type=\"importmap\""));
  // Framed by no other site.
  EXPECT_THAT(page.headers, ::testing::Contains(std::pair<std::string, std::string>(
                                "Content-Security-Policy", "frame-ancestors 'none'")));
  // Every module the page imports is in the binary.
  for (const char* module :
       {"/ui/app.js", "/ui/vendor/preact.module.js", "/ui/vendor/hooks.module.js",
        "/ui/vendor/htm.module.js", "/ui/vendor/uPlot.esm.js"}) {
    ApiResponse file = Call("GET", module);
    EXPECT_EQ(file.code, 200) << module;
    EXPECT_THAT(file.content_type, HasSubstr("text/javascript")) << module;
    EXPECT_FALSE(file.body.empty()) << module;
  }
  EXPECT_EQ(Call("GET", "/ui/nothing.js").code, 404);
  // An API client asking for "/" gets the paths, as from kube-apiserver.
  EXPECT_TRUE(Body(Call("GET", "/"))["paths"].is_array());
}

TEST_F(HandlerTest, CreateStoresTheDefaultedObjectOnceAndGetReturnsIt) {
  ApiResponse created = Call("POST", kJobs, kTestJob);
  ASSERT_EQ(created.code, 201) << created.body;
  api::Json job = Body(created);
  EXPECT_EQ(job["metadata"]["namespace"], "default");
  EXPECT_FALSE(job["metadata"]["uid"].get<std::string>().empty());
  // Upstream's defaults are applied, as the webhook would.
  EXPECT_EQ(job["spec"]["runPolicy"]["cleanPodPolicy"], "None");
  EXPECT_EQ(job["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"], "OnFailure");
  EXPECT_EQ(Body(Call("GET", std::string(kJobs) + "/mnist")), job);

  ApiResponse again = Call("POST", kJobs, kTestJob);
  EXPECT_EQ(again.code, 409);
  EXPECT_EQ(Body(again)["reason"], "AlreadyExists");
  EXPECT_EQ(Body(again)["message"], "pytorchjobs.kubeflow.org \"mnist\" already exists");
}

// Kinds added through the registry alone are served like every other:
// created with their defaults and warnings, listed as kubectl's tables.
TEST_F(HandlerTest, SecretsServicesAndClaimsAreServedThroughTheirDescriptors) {
  const std::string core = "/api/v1/namespaces/default/";
  ApiResponse secret = Call("POST", core + "secrets",
                            R"({"metadata": {"name": "creds"}, "stringData": {"token": "t0k"}})");
  ASSERT_EQ(secret.code, 201) << secret.body;
  EXPECT_EQ(Body(secret)["data"]["token"], "dDBr");
  EXPECT_THAT(secret.warnings, ::testing::IsEmpty());
  ApiResponse bad =
      Call("POST", core + "secrets", R"({"metadata": {"name": "x"}, "data": {"k": "plain text"}})");
  EXPECT_EQ(bad.code, 422);
  EXPECT_THAT(bad.body, ::testing::Not(HasSubstr("plain text")));

  ApiResponse service =
      Call("POST", core + "services",
           R"({"metadata": {"name": "trainer"}, "spec": {"ports": [{"port": 80}]}})");
  ASSERT_EQ(service.code, 201) << service.body;
  ApiResponse claim =
      Call("POST", core + "persistentvolumeclaims",
           R"({"metadata": {"name": "ckpt"}, "spec": {"accessModes": ["ReadWriteOnce"],
                               "resources": {"requests": {"storage": "1Gi"}}}})");
  ASSERT_EQ(claim.code, 201) << claim.body;
  EXPECT_THAT(claim.warnings, ::testing::IsEmpty());

  const std::string table = "application/json;as=Table;v=v1;g=meta.k8s.io";
  api::Json services = Body(Call("GET", core + "services", "", "", {}, table));
  EXPECT_EQ(services["columnDefinitions"][4]["name"], "Port(s)");
  EXPECT_EQ(services["rows"][0]["cells"][4], "80/TCP");
  api::Json claims = Body(Call("GET", core + "persistentvolumeclaims", "", "", {}, table));
  EXPECT_EQ(claims["rows"][0]["cells"][1], "Pending");
  api::Json discovery = Body(Call("GET", "/api/v1"));
  std::vector<std::string> names;
  for (const api::Json& r : discovery["resources"]) names.push_back(r["name"]);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"secrets", "services", "persistentvolumeclaims"}));
}

TEST_F(HandlerTest, AnInvalidObjectGets422WithACausePerFieldAndChangesNothing) {
  int64_t rv = backend_.store().CurrentResourceVersion();
  api::Json bad = api::Json::parse(kTestJob);
  bad["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = 2;
  bad["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0].erase("image");
  ApiResponse r = Call("POST", kJobs, bad.dump());
  ASSERT_EQ(r.code, 422) << r.body;
  api::Json status = Body(r);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "Invalid");
  EXPECT_THAT(status["message"].get<std::string>(),
              HasSubstr("PyTorchJob.kubeflow.org \"mnist\" is invalid: ["));
  std::vector<std::string> fields;
  for (const api::Json& c : status["details"]["causes"]) fields.push_back(c["field"]);
  EXPECT_THAT(fields, ::testing::UnorderedElementsAre(
                          "spec.pytorchReplicaSpecs[Master].replicas",
                          "spec.pytorchReplicaSpecs[Master].template.spec.containers[0].image"));
  EXPECT_EQ(backend_.store().CurrentResourceVersion(), rv);
}

TEST_F(HandlerTest, UnknownFieldsAreRefusedWhenStrictAndDroppedWithAWarningOtherwise) {
  api::Json job = api::Json::parse(kTestJob);
  job["spec"]["runPolicy"] = {{"backofLimit", 3}};
  ApiResponse strict =
      Call("POST", kJobs, job.dump(), "application/json", {{"fieldValidation", "Strict"}});
  EXPECT_EQ(strict.code, 422);
  EXPECT_THAT(strict.body, HasSubstr("did you mean \\\"backoffLimit\\\""));
  ApiResponse warned = Call("POST", kJobs, job.dump());
  ASSERT_EQ(warned.code, 201) << warned.body;
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_THAT(warned.warnings[0], HasSubstr("spec.runPolicy.backofLimit"));
  EXPECT_FALSE(Body(warned)["spec"]["runPolicy"].contains("backofLimit"));

  // A field of the kind written in the wrong place: where it belongs.
  api::Json misplaced = api::Json::parse(kTestJob);
  misplaced["metadata"]["name"] = "misplaced";
  misplaced["spec"]["ttlSecondsAfterFinished"] = 60;
  ApiResponse refused =
      Call("POST", kJobs, misplaced.dump(), "application/json", {{"fieldValidation", "Strict"}});
  EXPECT_EQ(refused.code, 422);
  EXPECT_THAT(refused.body, HasSubstr("did you mean spec.runPolicy.ttlSecondsAfterFinished?"));
  ApiResponse hinted = Call("POST", kJobs, misplaced.dump());
  ASSERT_EQ(hinted.code, 201) << hinted.body;
  ASSERT_EQ(hinted.warnings.size(), 1u);
  EXPECT_THAT(hinted.warnings[0],
              HasSubstr("did you mean spec.runPolicy.ttlSecondsAfterFinished?"));
}

TEST_F(HandlerTest, MalformedOrMismatchedRequestsGet4xxAndChangeNothing) {
  int writes = backend_.writes;
  EXPECT_EQ(Call("POST", kJobs, "{not json").code, 400);
  EXPECT_EQ(Call("POST", kJobs, "").code, 400);
  EXPECT_EQ(Call("POST", kJobs, "[1, 2]").code, 400);
  EXPECT_EQ(Call("POST", kJobs, R"({"kind": "TFJob", "apiVersion": "kubeflow.org/v1"})").code, 400);
  api::Json other_ns = api::Json::parse(kTestJob);
  other_ns["metadata"]["namespace"] = "elsewhere";
  EXPECT_EQ(Call("POST", kJobs, other_ns.dump()).code, 400);
  EXPECT_EQ(Call("POST", "/api/v1/namespaces/default/pods", "{}").code, 405);
  EXPECT_EQ(Call("DELETE", "/api/v1/nodes/box").code, 405);
  EXPECT_EQ(Call("GET", "/api/v1/namespaces/default/pods/..").code, 400);
  EXPECT_EQ(Call("GET", "/nothing/here").code, 404);
  EXPECT_EQ(Call("POST", std::string(kJobs) + "/mnist", kTestJob).code, 405);
  EXPECT_EQ(backend_.writes, writes);
}

TEST_F(HandlerTest, ObjectsGoOnlyIntoNamespacesThatExist) {
  ApiResponse r = Call("POST", "/apis/kubeflow.org/v1/namespaces/team/pytorchjobs", kTestJob);
  EXPECT_EQ(r.code, 404);
  EXPECT_EQ(Body(r)["message"], "namespaces \"team\" not found");
  ASSERT_EQ(Call("POST", "/api/v1/namespaces", R"({"metadata": {"name": "team"}})").code, 201);
  EXPECT_EQ(Call("POST", "/apis/kubeflow.org/v1/namespaces/team/pytorchjobs", kTestJob).code, 201);
  // Deleting the namespace takes what is in it.
  ASSERT_EQ(Call("DELETE", "/api/v1/namespaces/team").code, 200);
  EXPECT_EQ(Call("GET", "/apis/kubeflow.org/v1/namespaces/team/pytorchjobs/mnist").code, 404);
  EXPECT_EQ(Call("DELETE", "/api/v1/namespaces/default").code, 403);
}

TEST_F(HandlerTest, PatchesSuspendAndResumeAndRefuseWhatMayNotChange) {
  ASSERT_EQ(Call("POST", kJobs, kTestJob).code, 201);
  std::string job = std::string(kJobs) + "/mnist";
  ApiResponse merged = Call("PATCH", job, R"({"spec": {"runPolicy": {"suspend": true}}})",
                            "application/merge-patch+json");
  ASSERT_EQ(merged.code, 200) << merged.body;
  EXPECT_EQ(Body(merged)["spec"]["runPolicy"]["suspend"], true);
  EXPECT_EQ(Body(merged)["metadata"]["generation"], 2);
  ApiResponse json_patch = Call(
      "PATCH", job, R"([{"op": "replace", "path": "/spec/runPolicy/suspend", "value": false}])",
      "application/json-patch+json");
  ASSERT_EQ(json_patch.code, 200) << json_patch.body;
  EXPECT_EQ(Body(json_patch)["spec"]["runPolicy"]["suspend"], false);
  // Invalid results, impossible patches and unknown patch types change nothing.
  int64_t rv = backend_.store().CurrentResourceVersion();
  EXPECT_EQ(Call("PATCH", job, R"({"spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 3}}}})",
                 "application/merge-patch+json")
                .code,
            422);
  EXPECT_EQ(Call("PATCH", job, R"([{"op": "remove", "path": "/spec/nothing"}])",
                 "application/json-patch+json")
                .code,
            422);
  EXPECT_EQ(Call("PATCH", job, "{}", "application/apply-patch+yaml").code, 422);  // no manager
  EXPECT_EQ(Call("PATCH", job, R"({"apiVersion": 1})", "application/merge-patch+json").code, 400);
  EXPECT_EQ(Call("PATCH", job, R"({"metadata": {"resourceVersion": "1"}})",
                 "application/merge-patch+json")
                .code,
            409);  // a stale precondition
  ApiResponse dry = Call("PATCH", job, R"({"spec": {"runPolicy": {"suspend": true}}})",
                         "application/merge-patch+json", {{"dryRun", "All"}});
  EXPECT_EQ(dry.code, 200);  // what it would make, never applied
  EXPECT_EQ(api::Json::parse(dry.body)["spec"]["runPolicy"]["suspend"], true);
  EXPECT_EQ(Call("PATCH", job, R"({"spec": {"runPolicy": {"suspend": true}}})",
                 "application/merge-patch+json", {{"dryRun", "Some"}})
                .code,
            422);
  EXPECT_EQ(Call("PATCH", job, R"({"spec": {"runPolicy": {"suspend": true}}})",
                 "application/strategic-merge-patch+json")
                .code,
            415);  // a custom resource, as on kube-apiserver
  EXPECT_EQ(
      Call("PATCH", job, R"({"metadata": {"name": "other"}})", "application/merge-patch+json").code,
      400);
  EXPECT_EQ(backend_.store().CurrentResourceVersion(), rv);
  EXPECT_EQ(Call("PATCH", std::string(kJobs) + "/gone", "{}", "application/merge-patch+json").code,
            404);
}

TEST_F(HandlerTest, FinalizersHoldADeletedObjectUntilTheLastIsRemoved) {
  api::Json held = api::Json::parse(kTestJob);
  held["metadata"]["finalizers"] = {"example.com/hold"};
  held["metadata"]["deletionTimestamp"] = "2020-01-01T00:00:00Z";  // not the client's to set
  ASSERT_EQ(Call("POST", kJobs, held.dump()).code, 201);
  std::string job = std::string(kJobs) + "/mnist";
  EXPECT_FALSE(Body(Call("GET", job))["metadata"].contains("deletionTimestamp"));
  ApiResponse deleted = Call("DELETE", job);
  ASSERT_EQ(deleted.code, 200) << deleted.body;
  EXPECT_EQ(Body(deleted)["metadata"]["deletionTimestamp"], FormatRfc3339(clock_.Now()));
  ASSERT_EQ(Call("GET", job).code, 200);  // held
  ApiResponse released =
      Call("PATCH", job, R"({"metadata": {"finalizers": null}})", "application/merge-patch+json");
  EXPECT_EQ(released.code, 200) << released.body;
  EXPECT_EQ(Call("GET", job).code, 404);  // gone with its last finalizer
}

TEST_F(HandlerTest, StatusIsWrittenOnlyThroughItsSubresource) {
  ASSERT_EQ(Call("POST", kJobs, kTestJob).code, 201);
  std::string job = std::string(kJobs) + "/mnist";
  api::Json with_status = Body(Call("GET", job));
  with_status["status"] = {{"conditions", {{{"type", "Created"}, {"status", "True"}}}}};
  ASSERT_EQ(Call("PUT", job, with_status.dump()).code, 200);
  EXPECT_FALSE(Body(Call("GET", job)).contains("status"));  // PUT of the object keeps the status
  ApiResponse r = Call("PUT", job + "/status", with_status.dump());
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(Body(Call("GET", job))["status"]["conditions"][0]["type"], "Created");
}

TEST_F(HandlerTest, ListsFilterBySelectorAndPrintAsTables) {
  ASSERT_EQ(Call("POST", kJobs, kTestJob).code, 201);
  api::Json labelled = api::Json::parse(kTestJob);
  labelled["metadata"] = {{"name", "other"}, {"labels", {{"team", "vision"}}}};
  ASSERT_EQ(Call("POST", kJobs, labelled.dump()).code, 201);
  api::Json list = Body(Call("GET", kJobs));
  EXPECT_EQ(list["kind"], "PyTorchJobList");
  EXPECT_EQ(list["items"].size(), 2u);
  api::Json only = Body(Call("GET", kJobs, "", "", {{"labelSelector", "team=vision"}}));
  ASSERT_EQ(only["items"].size(), 1u);
  EXPECT_EQ(only["items"][0]["metadata"]["name"], "other");
  api::Json table = Body(Call("GET", "/apis/kubeflow.org/v1/pytorchjobs", "", "", {},
                              "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["rows"].size(), 2u);
}

TEST_F(HandlerTest, ListsArePagedByLimitAndContinueInKeyOrder) {
  for (const char* name : {"c", "a", "e", "b", "d"}) {
    api::Json job = api::Json::parse(kTestJob);
    job["metadata"] = {{"name", name}};
    ASSERT_EQ(Call("POST", kJobs, job.dump()).code, 201);
  }
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    std::multimap<std::string, std::string> query = {{"limit", "2"}};
    if (!token.empty()) query.emplace("continue", token);
    ApiResponse page = Call("GET", kJobs, "", "", query);
    ASSERT_EQ(page.code, 200) << page.body;
    api::Json list = Body(page);
    ASSERT_LE(list["items"].size(), 2u);
    for (const api::Json& item : list["items"]) seen.push_back(item["metadata"]["name"]);
    token = list["metadata"].value("continue", "");
    if (!token.empty()) {
      EXPECT_GT(list["metadata"]["remainingItemCount"].get<int64_t>(), 0);
    }
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(pages, 3);
  // Kubernetes' reading of limit 0: everything, with no token.
  api::Json all = Body(Call("GET", kJobs, "", "", {{"limit", "0"}}));
  EXPECT_EQ(all["items"].size(), 5u);
  EXPECT_FALSE(all["metadata"].contains("continue"));
  EXPECT_EQ(Call("GET", kJobs, "", "", {{"continue", "not-a-token"}}).code, 400);
  EXPECT_EQ(Call("GET", kJobs, "", "", {{"limit", "ten"}}).code, 400);
}

TEST_F(HandlerTest, AWatchSendsWhatThereIsThenEachChange) {
  ASSERT_EQ(Call("POST", kJobs, kTestJob).code, 201);
  ApiResponse watch = Call("GET", kJobs, "", "", {{"watch", "true"}});
  ASSERT_EQ(watch.code, 200);
  ASSERT_TRUE(watch.stream);
  std::string out;
  ASSERT_TRUE(watch.stream->Next(out, std::chrono::milliseconds(0)));
  EXPECT_THAT(out, HasSubstr(R"({"type":"ADDED","object":{"apiVersion":"kubeflow.org/v1")"));
  out.clear();
  ASSERT_EQ(Call("DELETE", std::string(kJobs) + "/mnist").code, 200);
  ASSERT_TRUE(watch.stream->Next(out, std::chrono::milliseconds(0)));
  EXPECT_THAT(out, HasSubstr(R"({"type":"DELETED")"));

  // From a resourceVersion: only what came after it.
  ApiResponse from = Call("GET", kJobs, "", "", {{"watch", "1"}, {"resourceVersion", "1"}});
  out.clear();
  ASSERT_TRUE(from.stream->Next(out, std::chrono::milliseconds(0)));
  EXPECT_THAT(out, HasSubstr(R"("type":"ADDED")"));
  EXPECT_THAT(out, HasSubstr(R"("type":"DELETED")"));
}

// kubectl delete --grace-period: the pod's last state, which its node's
// agent reads, carries the grace period; a malformed one changes nothing.
TEST_F(HandlerTest, ADeletesGracePeriodIsThePodsLastState) {
  auto create = [&](const std::string& name) {
    api::Json pod = {{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"metadata", {{"name", name}, {"namespace", "default"}}},
                     {"spec", {{"containers", {{{"name", "main"}}}}}}};
    ASSERT_TRUE(backend_.writable().Create(pod).ok());
  };
  std::vector<api::Json> seen;
  Result<store::WatchId> watch = backend_.writable().Watch(
      0, [&](const store::WatchEvent& e) { seen.push_back(e.object["metadata"]); });
  ASSERT_TRUE(watch.ok());
  std::string pods = "/api/v1/namespaces/default/pods/";
  create("a");
  create("b");
  create("c");
  EXPECT_EQ(Call("DELETE", pods + "a", "", "", {{"gracePeriodSeconds", "soon"}}).code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"gracePeriodSeconds": -1})").code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"gracePeriodSeconds": [)").code, 400);
  // What trainyard would not do is refused, never ignored.
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"dryRun": ["All"]})").code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"preconditions": {"uid": "x"}})").code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"propagationPolicy": "Orphan"})").code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"propagationPolicy": "Backgroud"})").code, 400);
  EXPECT_EQ(Call("DELETE", pods + "a", R"({"propagationPolicy": 1})").code, 400);
  EXPECT_TRUE(backend_.store().Get({"Pod", "default", "a"}).ok()) << "a bad delete deleted";

  EXPECT_EQ(Call("DELETE", pods + "a", R"({"kind":"DeleteOptions","gracePeriodSeconds":0})").code,
            200);
  EXPECT_EQ(Call("DELETE", pods + "b", "", "", {{"gracePeriodSeconds", "45"}}).code, 200);
  EXPECT_EQ(Call("DELETE", pods + "c").code, 200);
  std::map<std::string, api::Json> last;  // each pod's last state, as a watcher saw it
  for (const api::Json& meta : seen) last[meta["name"].get<std::string>()] = meta;
  EXPECT_EQ(last["a"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(last["b"]["deletionGracePeriodSeconds"], 45);
  EXPECT_TRUE(last["b"].contains("deletionTimestamp"));
  EXPECT_FALSE(last["c"].contains("deletionGracePeriodSeconds")) << "its own spec decides";
  for (const char* name : {"a", "b", "c"}) {
    EXPECT_FALSE(backend_.store().Get({"Pod", "default", name}).ok()) << name;
  }
  backend_.writable().StopWatch(*watch);
}

TEST_F(HandlerTest, LogsShowTheRunAndItsLastLines) {
  std::filesystem::path dir = FreshTestDir("trainyard-handler-test");
  backend_.log_path = (dir / "p.log").string();
  std::ofstream(backend_.log_path) << "one\ntwo\nthree\n";
  api::Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "mnist-master-0"}, {"namespace", "default"}}},
      {"spec", {{"nodeName", "n"}, {"containers", {{{"name", "pytorch"}}}}}},
      {"status",
       {{"phase", "Succeeded"},
        {"containerStatuses",
         {{{"name", "pytorch"}, {"restartCount", 0}, {"state", {{"terminated", {}}}}}}}}}};
  ASSERT_TRUE(backend_.writable().Create(pod).ok());
  auto read_all = [](ApiResponse r) {
    std::string out;
    while (r.stream && r.stream->Next(out, std::chrono::milliseconds(0))) {
    }
    return out;
  };
  std::string path = "/api/v1/namespaces/default/pods/mnist-master-0/log";
  EXPECT_EQ(read_all(Call("GET", path)), "one\ntwo\nthree\n");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"tailLines", "2"}})), "two\nthree\n");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"tailLines", "0"}})), "");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"follow", "true"}})), "one\ntwo\nthree\n");
  EXPECT_EQ(Call("GET", path, "", "", {{"previous", "true"}}).code, 400);
  EXPECT_EQ(Call("GET", path, "", "", {{"container", "other"}}).code, 400);
  EXPECT_EQ(Call("GET", path, "", "", {{"tailLines", "-3"}}).code, 400);
  // A plain log keeps no line times: what needs them is refused, not ignored.
  EXPECT_EQ(Call("GET", path, "", "", {{"timestamps", "true"}}).code, 400);
  EXPECT_EQ(Call("GET", path, "", "", {{"sinceSeconds", "60"}}).code, 400);
  std::filesystem::remove_all(dir);
}

TEST_F(HandlerTest, AKubeletsLogIsShownAsTheKubeletShowsIt) {
  std::filesystem::path dir = FreshTestDir("trainyard-handler-cri-test");
  backend_.log_path = (dir / "0.log").string();
  backend_.log_cri = true;
  std::ofstream(backend_.log_path) << "2026-11-26T07:00:01.5Z stdout F one\n"
                                      "2026-11-26T07:00:02Z stderr P tw\n"
                                      "2026-11-26T07:00:02.1Z stderr F o\n"
                                      "2026-11-26T07:00:03Z stdout F three\n";
  api::Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}, {"namespace", "default"}}},
      {"spec", {{"nodeName", "n"}, {"containers", {{{"name", "main"}}}}}},
      {"status",
       {{"phase", "Succeeded"},
        {"containerStatuses",
         {{{"name", "main"}, {"restartCount", 0}, {"state", {{"terminated", {}}}}}}}}}};
  ASSERT_TRUE(backend_.writable().Create(pod).ok());
  auto read_all = [](ApiResponse r) {
    std::string out;
    while (r.stream && r.stream->Next(out, std::chrono::milliseconds(0))) {
    }
    return out;
  };
  std::string path = "/api/v1/namespaces/default/pods/p/log";
  EXPECT_EQ(read_all(Call("GET", path)), "one\ntwo\nthree\n");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"follow", "true"}, {"timestamps", "true"}})),
            "2026-11-26T07:00:01.5Z one\n2026-11-26T07:00:02Z tw2026-11-26T07:00:02.1Z o\n"
            "2026-11-26T07:00:03Z three\n");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"sinceTime", "2026-11-26T07:00:02Z"}})),
            "two\nthree\n");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"limitBytes", "5"}})), "one\nt");
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"tailLines", "1"}})), "three\n");
  clock_.Set(*ParseRfc3339("2026-11-26T07:00:04Z"));
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"sinceSeconds", "1"}})), "three\n");
  EXPECT_EQ(Call("GET", path, "", "", {{"sinceSeconds", "0"}}).code, 400);
  EXPECT_EQ(Call("GET", path, "", "", {{"sinceTime", "yesterday"}}).code, 400);
  EXPECT_EQ(
      Call("GET", path, "", "", {{"sinceTime", "2026-11-26T07:00:02Z"}, {"sinceSeconds", "1"}})
          .code,
      400);
  EXPECT_EQ(Call("GET", path, "", "", {{"limitBytes", "0"}}).code, 400);
  // The last line of a run that is over counts without its newline.
  std::ofstream(backend_.log_path, std::ios::app) << "2026-11-26T07:00:05Z stdout F four";
  EXPECT_EQ(read_all(Call("GET", path, "", "", {{"tailLines", "1"}, {"timestamps", "true"}})),
            "2026-11-26T07:00:05Z four\n");
  std::filesystem::remove_all(dir);
}

TEST(ObservationsTest, ATrialsMetricsAreListedInOrderAsKatibReturnsThem) {
  FakeClock clock;
  FakeBackend backend(clock);
  ApiHandler handler(backend, clock);
  ASSERT_TRUE(handler.EnsureDefaultNamespace().ok());
  auto get = [&](const std::string& path, const std::string& method = "GET") {
    return handler.Handle({.method = method, .path = path});
  };
  const std::string trials = "/apis/kubeflow.org/v1beta1/namespaces/default/trials";
  EXPECT_EQ(get(trials + "/t1/observations").code, 404);  // no such trial
  ASSERT_TRUE(backend.writable()
                  .Create({{"apiVersion", "kubeflow.org/v1beta1"},
                           {"kind", "Trial"},
                           {"metadata", {{"name", "t1"}, {"namespace", "default"}}}})
                  .ok());
  EXPECT_EQ(api::Json::parse(get(trials + "/t1/observations").body)["metricLogs"],
            api::Json::array());
  ASSERT_TRUE(backend.writable()
                  .AppendObservations(
                      "default/t1",
                      {{1704067200'000'000, "loss", "0.5"}, {1704067200'250'000, "loss", "0.25"}},
                      "", 0)
                  .ok());
  ApiResponse r = get(trials + "/t1/observations");
  ASSERT_EQ(r.code, 200) << r.body;
  api::Json log = api::Json::parse(r.body);
  EXPECT_EQ(log["kind"], "ObservationLog");
  ASSERT_EQ(log["metricLogs"].size(), 2u);
  EXPECT_EQ(log["metricLogs"][1], api::Json::parse(R"({"timeStamp": "2024-01-01T00:00:00.250000Z",
                                 "metric": {"name": "loss", "value": "0.25"}})"));
  EXPECT_EQ(get(trials + "/t1/observations", "DELETE").code, 405);
  // Only trials have an observation log.
  EXPECT_EQ(get("/apis/kubeflow.org/v1beta1/namespaces/default/experiments/e/observations").code,
            404);
}

class PushTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok()); }

  // A trial of an experiment whose collector is `kind`, with conditions.
  void AddTrial(const std::string& name, const std::string& kind,
                api::Json conditions = api::Json::array()) {
    api::Json trial = {{"apiVersion", "kubeflow.org/v1beta1"},
                       {"kind", "Trial"},
                       {"metadata", {{"name", name}, {"namespace", "default"}}},
                       {"spec",
                        {{"objective", {{"type", "minimize"}, {"objectiveMetricName", "loss"}}},
                         {"metricsCollector", {{"collector", {{"kind", kind}}}}}}},
                       {"status", {{"conditions", std::move(conditions)}}}};
    ASSERT_TRUE(backend_.writable().Create(trial).ok());
  }
  ApiResponse Push(const std::string& trial, const std::string& body, std::string token = "") {
    return handler_.Handle({.method = "POST",
                            .path = kTrials + trial + "/observations",
                            .authorization = token.empty() ? "" : "Bearer " + token,
                            .body = body});
  }
  std::vector<store::ObservationRow> Rows(const std::string& trial) {
    return *backend_.store().ListObservations("default/" + trial);
  }

  static constexpr const char* kTrials = "/apis/kubeflow.org/v1beta1/namespaces/default/trials/";
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
};

TEST_F(PushTest, APushTrialsMetricsAreStoredInEitherShape) {
  AddTrial("t1", "Push");
  int64_t now_us =
      std::chrono::duration_cast<std::chrono::microseconds>(clock_.Now().time_since_epoch())
          .count();
  // As the Katib SDK's report_metrics takes them: stamped with the time.
  ApiResponse r = Push("t1", R"({"metrics": {"loss": 0.25, "accuracy": "0.9"}})");
  ASSERT_EQ(r.code, 200) << r.body;
  EXPECT_EQ(api::Json::parse(r.body)["message"], "recorded 2 metric values for trial t1");
  // As Katib's ObservationLog: each with its own time, or the request's.
  r = Push("t1", R"({"metricLogs": [
      {"timeStamp": "2024-01-01T00:00:00.5Z", "metric": {"name": "loss", "value": "0.125"}},
      {"metric": {"name": "loss", "value": 0.0625}}]})");
  ASSERT_EQ(r.code, 200) << r.body;
  // Each value at its place among its metric's.
  using Row = store::ObservationRow;
  EXPECT_EQ(Rows("t1"),
            (std::vector<Row>{Row{now_us, "loss", "0.25", store::kNoStep, 0},
                              Row{now_us, "accuracy", "0.9", store::kNoStep, 0},
                              Row{1704067200'500'000, "loss", "0.125", store::kNoStep, 1},
                              Row{now_us, "loss", "0.0625", store::kNoStep, 2}}));
  // What was pushed reads back through GET.
  api::Json log = api::Json::parse(
      handler_.Handle({.method = "GET", .path = std::string(kTrials) + "t1/observations"}).body);
  EXPECT_EQ(log["metricLogs"].size(), 4u);
}

TEST_F(PushTest, ABadPushSaysWhatIsWrongAndStoresNothing) {
  AddTrial("t1", "Push");
  int writes = backend_.writes;
  ApiResponse r = Push("t1", R"({"metrics": {"loss": "low", "acc": 0.9}})");
  EXPECT_EQ(r.code, 422);
  EXPECT_THAT(r.body, HasSubstr("metrics[loss]: Invalid value: \\\"low\\\": must be a number"));
  r = Push("t1", R"({"metricLogs": [{"timeStamp": "yesterday",
                                      "metric": {"name": "loss", "value": "1"}}]})");
  EXPECT_EQ(r.code, 422);
  EXPECT_THAT(r.body, HasSubstr("metricLogs[0].timeStamp: Invalid value: \\\"yesterday\\\""));
  r = Push("t1", R"({"metricLogs": [{"metric": {"name": 7, "value": "1"}}]})");
  EXPECT_EQ(r.code, 422);
  EXPECT_THAT(r.body, HasSubstr("metricLogs[0].metric.name: Invalid value: 7: must be a string"));
  EXPECT_EQ(Push("t1", R"({"loss": 1})").code, 422);  // neither shape
  EXPECT_EQ(Push("t1", R"({"metrics": {}})").code, 422);
  EXPECT_EQ(Push("t1", "loss=1").code, 400);
  EXPECT_EQ(backend_.writes, writes);
  EXPECT_TRUE(Rows("t1").empty());
}

TEST_F(PushTest, OnlyARunningPushTrialTakesMetrics) {
  AddTrial("stdout", "StdOut");
  AddTrial("done", "Push",
           {{{"type", "Succeeded"}, {"status", "True"}, {"reason", "TrialSucceeded"}}});
  const std::string body = R"({"metrics": {"loss": 1}})";
  ApiResponse r = Push("stdout", body);
  EXPECT_EQ(r.code, 400);
  EXPECT_THAT(r.body, HasSubstr("trial stdout collects its metrics with the StdOut collector"));
  r = Push("done", body);
  EXPECT_EQ(r.code, 409);
  EXPECT_THAT(r.body, HasSubstr("trial done has finished (Succeeded)"));
  EXPECT_EQ(Push("nobody", body).code, 404);
  EXPECT_TRUE(Rows("stdout").empty());
  EXPECT_TRUE(Rows("done").empty());
}

TEST(PushAuthTest, ATrialPushesWithItsUidWhereTokensAreRequired) {
  FakeClock clock;
  FakeBackend backend(clock);
  Authorizer auth = *Authorizer::Parse("ops-secret-123 ops *\n");
  ApiHandler handler(backend, clock, &auth);
  api::Json trial = {{"apiVersion", "kubeflow.org/v1beta1"},
                     {"kind", "Trial"},
                     {"metadata", {{"name", "t1"}, {"namespace", "default"}}},
                     {"spec", {{"metricsCollector", {{"collector", {{"kind", "Push"}}}}}}}};
  Result<api::Json> created = backend.writable().Create(trial);
  ASSERT_TRUE(created.ok());
  const std::string uid = (*created)["metadata"]["uid"];  // the store's own
  const std::string path = "/apis/kubeflow.org/v1beta1/namespaces/default/trials/t1/observations";
  auto call = [&](const std::string& method, const std::string& token) {
    return handler
        .Handle({.method = method,
                 .path = path,
                 .authorization = "Bearer " + token,
                 .body = R"({"metrics": {"loss": 1}})"})
        .code;
  };
  EXPECT_EQ(call("POST", uid), 200);
  EXPECT_EQ(call("POST", uid + "x"), 401);
  EXPECT_EQ(call("POST", uid.substr(1)), 401);
  EXPECT_EQ(call("GET", uid), 401);  // the uid pushes; it reads nothing
  EXPECT_EQ(call("POST", "ops-secret-123"), 200);
  EXPECT_EQ(handler
                .Handle({.method = "GET",
                         .path = "/apis/kubeflow.org/v1beta1/namespaces/default/trials/t1",
                         .authorization = "Bearer " + uid})
                .code,
            401);
}

}  // namespace
}  // namespace trainyard::server
