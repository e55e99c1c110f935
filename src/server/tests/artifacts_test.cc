// A job's artifacts served over the API and MLflow's calls (the files
// themselves: common/tests/artifact_files_test.cc).
#include "server/artifacts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "api/tracking.h"
#include "common/tests/test_dir.h"
#include "server/handler.h"
#include "server/tests/fake_backend.h"

namespace trainyard::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// Over the API: a job's artifacts by its name, a trial's job's by its
// trial's, MLflow's listing and artifacts service.
class ArtifactsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = FreshTestDir("artifacts-api");
    backend_.artifacts_dir = root_.string();
    ASSERT_TRUE(handler_.EnsureDefaultNamespace().ok());
  }
  ApiResponse Get(const std::string& path, std::multimap<std::string, std::string> query = {}) {
    return handler_.Handle({.method = "GET", .path = path, .query = std::move(query)});
  }
  std::string JobUid(const std::string& body) {
    ApiResponse created =
        handler_.Handle({.method = "POST",
                         .path = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs",
                         .content_type = "application/json",
                         .body = body});
    EXPECT_EQ(created.code, 201) << created.body;
    return api::Json::parse(created.body)["metadata"]["uid"];
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
  FakeClock clock_;
  FakeBackend backend_{clock_};
  ApiHandler handler_{backend_, clock_};
  const std::string job_ = "/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/mnist/artifacts";
};

TEST_F(ArtifactsApiTest, AJobsArtifactsAreListedAndDownloaded) {
  std::string uid = JobUid(kTestJob);
  fs::path dir = api::ArtifactsDirOf(root_.string(), "default", uid);
  WriteFile(dir / "model" / "best.pt", "weights");
  ApiResponse listed = Get(job_);
  ASSERT_EQ(listed.code, 200) << listed.body;
  api::Json doc = api::Json::parse(listed.body);
  EXPECT_EQ(doc["kind"], "ArtifactList");
  EXPECT_EQ(doc["owner"]["kind"], "PyTorchJob");
  ASSERT_EQ(doc["items"].size(), 1u);
  EXPECT_EQ(doc["items"][0]["path"], "model/best.pt");
  EXPECT_EQ(doc["items"][0]["size"], 7);
  ApiResponse file = Get(job_, {{"path", "model/best.pt"}});
  EXPECT_EQ(file.code, 200);
  EXPECT_EQ(file.body, "weights");
  EXPECT_EQ(file.content_type, "application/octet-stream");
  EXPECT_EQ(Get(job_, {{"path", "../../etc/passwd"}}).code, 400);
  EXPECT_EQ(Get(job_, {{"path", "model/none.pt"}}).code, 404);
  EXPECT_EQ(Get("/apis/kubeflow.org/v1/namespaces/default/pytorchjobs/other/artifacts").code, 404);
  EXPECT_EQ(handler_.Handle({.method = "DELETE", .path = job_}).code, 405);
  // A large file is streamed, whole.
  std::string big(3 << 20, 'x');
  WriteFile(dir / "big.bin", big);
  ApiResponse streamed = Get(job_, {{"path", "big.bin"}});
  ASSERT_NE(streamed.stream, nullptr);
  std::string got;
  while (streamed.stream->Next(got, Duration::zero())) {
  }
  EXPECT_EQ(got.size(), big.size());
}

// A deleted job's artifacts are still found by its kind and name while
// they are kept.
// A file cut short while it is sent fails its transfer, whole or streamed:
// a client never takes a short file for the whole one.
TEST_F(ArtifactsApiTest, AFileThatShrinksWhileItIsSentFailsItsTransfer) {
  fs::path file = root_ / "shrinking";
  for (int64_t size : {int64_t{4} << 20, int64_t{1000}}) {
    std::ofstream(file) << std::string(static_cast<size_t>(size), 'x');
    Result<OpenedArtifact> opened = OpenRegularFile(file.string());
    ASSERT_TRUE(opened.ok());
    fs::resize_file(file, static_cast<uintmax_t>(size / 2));
    ApiResponse response = ArtifactDownload(std::move(*opened), "shrinking");
    if (!response.stream) {
      EXPECT_EQ(response.code, 409) << size;
      continue;
    }
    std::string sent;
    while (response.stream->Next(sent, Duration::zero())) {
    }
    EXPECT_EQ(static_cast<int64_t>(sent.size()), size / 2);
    EXPECT_TRUE(response.stream->Failed());
  }
}

TEST_F(ArtifactsApiTest, ADeletedJobsKeptArtifactsAreFoundByItsName) {
  std::string uid = JobUid(kTestJob);
  fs::path dir = api::ArtifactsDirOf(root_.string(), "default", uid);
  WriteFile(dir / "model.pt", "weights");
  ASSERT_TRUE(backend_.writable().Delete({"PyTorchJob", "default", "mnist"}).ok());
  EXPECT_EQ(Get(job_).code, 404);  // no record of whose it was: not found
  TimePoint deleted = clock_.Now();
  ASSERT_TRUE(
      WriteArtifactOwner(dir.string(),
                         {.kind = "PyTorchJob", .name = "mnist", .uid = uid, .deleted = deleted})
          .ok());
  ApiResponse listed = Get(job_);
  ASSERT_EQ(listed.code, 200) << listed.body;
  api::Json doc = api::Json::parse(listed.body);
  EXPECT_EQ(doc["owner"]["deleted"], FormatRfc3339(deleted));
  EXPECT_EQ(doc["items"][0]["path"], "model.pt");
  EXPECT_EQ(Get(job_, {{"path", "model.pt"}}).body, "weights");
  // Past its time, it is gone, removed yet or not.
  clock_.Advance(backend_.artifacts_retention);
  EXPECT_EQ(Get(job_).code, 404);
}

TEST_F(ArtifactsApiTest, AnApiOnlyServerSaysItKeepsNone) {
  JobUid(kTestJob);
  backend_.artifacts_dir = "";
  ApiResponse r = Get(job_);
  EXPECT_EQ(r.code, 404);
  EXPECT_THAT(r.body, HasSubstr("API-only"));
}

TEST_F(ArtifactsApiTest, AJobsMlflowRunHasItsOutputFolderAsArtifactUri) {
  std::string uid = JobUid(kTestJob);
  std::string dir = api::ArtifactsDirOf(root_.string(), "default", uid);
  // What mlflow.log_artifact does with a file: URI: a copy into it.
  WriteFile(fs::path(dir) / "plots" / "loss.png", "png");
  ApiResponse run = Get("/api/2.0/mlflow/runs/get", {{"run_id", "pytorchjob-mnist"}});
  ASSERT_EQ(run.code, 200) << run.body;
  EXPECT_EQ(api::Json::parse(run.body)["run"]["info"]["artifact_uri"], "file://" + dir);
  ApiResponse top = Get("/api/2.0/mlflow/artifacts/list", {{"run_id", "pytorchjob-mnist"}});
  ASSERT_EQ(top.code, 200) << top.body;
  api::Json listing = api::Json::parse(top.body);
  EXPECT_EQ(listing["root_uri"], "file://" + dir);
  EXPECT_EQ(listing["files"], (api::Json{{{"path", "plots"}, {"is_dir", true}}}));
  api::Json plots = api::Json::parse(
      Get("/api/2.0/mlflow/artifacts/list", {{"run_id", "pytorchjob-mnist"}, {"path", "plots"}})
          .body);
  EXPECT_EQ(plots["files"],
            (api::Json{{{"path", "plots/loss.png"}, {"is_dir", false}, {"file_size", 3}}}));
  // Its folder is its replicas': nothing is uploaded into it.
  ApiResponse put = handler_.Handle(
      {.method = "PUT",
       .path = "/api/2.0/mlflow-artifacts/artifacts/default/pytorchjob-mnist/artifacts/x",
       .body = "y"});
  EXPECT_EQ(put.code, 400);
  EXPECT_THAT(put.body, HasSubstr("TRAINYARD_OUTPUT_DIR"));
  EXPECT_FALSE(fs::exists(fs::path(dir) / "x"));
}

TEST_F(ArtifactsApiTest, AClientsRunUploadsAndDownloadsThroughTheArtifactsService) {
  ApiResponse created = handler_.Handle({.method = "POST",
                                         .path = "/api/2.0/mlflow/runs/create",
                                         .content_type = "application/json",
                                         .body = R"({"experiment_id": "0"})"});
  ASSERT_EQ(created.code, 200) << created.body;
  api::Json info = api::Json::parse(created.body)["run"]["info"];
  std::string run_id = info["run_id"];
  // Where MLflow's client sends it: artifact_uri's path under the service.
  EXPECT_EQ(info["artifact_uri"], "mlflow-artifacts:/default/" + run_id + "/artifacts");
  std::string base = "/api/2.0/mlflow-artifacts/artifacts/default/" + run_id + "/artifacts/";
  ApiResponse put =
      handler_.Handle({.method = "PUT", .path = base + "cfg/params.yaml", .body = "lr: 0.1\n"});
  ASSERT_EQ(put.code, 200) << put.body;
  EXPECT_EQ(Get(base + "cfg/params.yaml").body, "lr: 0.1\n");
  ApiResponse level = Get("/api/2.0/mlflow-artifacts/artifacts",
                          {{"path", "default/" + run_id + "/artifacts/cfg"}});
  EXPECT_EQ(api::Json::parse(level.body)["files"],
            (api::Json{{{"path", "params.yaml"}, {"is_dir", false}, {"file_size", 8}}}));
  // Another namespace's path through this endpoint, or a way out, is refused.
  ApiResponse other = Get("/api/2.0/mlflow-artifacts/artifacts/team-b/" + run_id + "/artifacts/x");
  EXPECT_EQ(other.code, 403);
  EXPECT_EQ(api::Json::parse(other.body)["error_code"], "PERMISSION_DENIED");
  ApiResponse out = handler_.Handle({.method = "PUT", .path = base + "../../../x", .body = "y"});
  EXPECT_EQ(out.code, 400) << out.body;
  EXPECT_EQ(Get(base + "missing").code, 404);
  EXPECT_EQ(Get("/api/2.0/mlflow-artifacts/artifacts/default/nope/artifacts/x").code, 404);
}

}  // namespace
}  // namespace trainyard::server
