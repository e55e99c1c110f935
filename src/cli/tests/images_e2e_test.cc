// `trainyard images` against a real registry: Debian's docker-registry on
// loopback with htpasswd auth, and an image built here from busybox-static
// with umoci (two layers, the second deleting a file of the first), pushed
// with skopeo. Built once for the suite.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/tests/test_registry.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "common/tests/needs.h"
#include "common/tests/test_dir.h"
#include "runtime/local/process.h"

namespace trainyard::cli::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// How ImagesE2eTest::RunInImage runs its Job.
struct RunSetting {
  bool host_credentials = true;  // the suite's auth file as the host's
  std::string pod;               // YAML lines of the pod spec, indented 6
  std::string documents;         // YAML documents before the Job
};

class ImagesE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string missing = TestRegistry::Missing();
    TRAINYARD_NEEDS(missing.empty(), missing);
    registry_ = TestRegistry::Get();
    ASSERT_NE(registry_, nullptr) << "the test registry did not start";
    dir_ = FreshTestDir("trainyard-images-home");
  }
  std::string Image(const std::string& tag) const { return registry_->Image(tag); }
  std::string Auth() const { return registry_->Auth(); }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `trainyard images ARGS` with a home of the test's own and no credentials
  // but those given.
  ToolRun Images(std::vector<std::string> args) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "images"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--home", (dir_ / "home").string()});
    Result<ToolRun> run =
        RunTool(argv, {.env = {{"HOME", dir_.string()},
                               {"REGISTRY_AUTH_FILE", (dir_ / "no-auth.json").string()},
                               {"CONTAINERS_REGISTRIES_CONF", registry_->RegistriesConf()}}});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ToolRun{.exit_code = -1};
  }

  // `trainyard run --root image` of a batch Job whose container is
  // `container` (YAML flow mapping fields after name and image), with the
  // suite's credentials as the host's auth file.
  ToolRun RunInImage(const std::string& container, const RunSetting& setting = {}) {
    std::ofstream(dir_ / "job.yaml")
        << fmt::format(R"({}
---
apiVersion: batch/v1
kind: Job
metadata: {{name: from-image}}
spec:
  template:
    spec:
      restartPolicy: Never
      volumes: [{{name: scratch, emptyDir: {{}}}}]
{}
      containers:
        - {{name: main, image: "{}", volumeMounts: [{{name: scratch, mountPath: /data/scratch}}]{}}}
)",
                       setting.documents, setting.pod, Image("v1"), container);
    std::string auth_file =
        setting.host_credentials ? Auth() : (dir_ / "no-host-credentials.json").string();
    Result<ToolRun> run =
        RunTool({TRAINYARD_BINARY, "run", "--root", "image", "--home", (dir_ / "home").string(),
                 (dir_ / "job.yaml").string()},
                {.env = {{"HOME", dir_.string()},
                         {"REGISTRY_AUTH_FILE", auth_file},
                         {"CONTAINERS_REGISTRIES_CONF", registry_->RegistriesConf()}}});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ToolRun{.exit_code = -1};
  }

  TestRegistry* registry_ = nullptr;
  fs::path dir_;
};

TEST_F(ImagesE2eTest, APulledImageIsListedWithItsLayersUnpackedAndItsDeletionsWhitedOut) {
  ToolRun pulled = Images({"pull", Image("v1"), "--authfile", Auth()});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.output;
  EXPECT_THAT(pulled.output, HasSubstr("Copying blob sha256:"));
  EXPECT_THAT(pulled.output, HasSubstr("Pulled " + Image("v1") + " (sha256:"));
  EXPECT_THAT(pulled.output, HasSubstr("2 layers"));
  ToolRun listed = Images({});
  EXPECT_THAT(listed.output, HasSubstr(Image("v1")));
  // The base layer has /app/old; the top one's whiteout hides it.
  int files = 0, whiteouts = 0;
  for (const auto& layer : fs::directory_iterator(dir_ / "home/images/layers")) {
    struct stat st;
    if (lstat((layer.path() / "app/old").c_str(), &st) != 0) continue;
    (S_ISCHR(st.st_mode) && st.st_rdev == 0 ? whiteouts : files)++;
  }
  EXPECT_EQ(files, 1);
  EXPECT_EQ(whiteouts, 1);
}

TEST_F(ImagesE2eTest, WithoutCredentialsThePullIsRefusedNamingTheImage) {
  ToolRun pulled = Images({"pull", Image("v1")});
  EXPECT_EQ(pulled.exit_code, 1);
  EXPECT_THAT(pulled.output, HasSubstr("pulling image \"" + Image("v1") +
                                       "\": the registry refused the credentials"));
  EXPECT_THAT(Images({}).output, Not(HasSubstr(Image("v1"))));
}

TEST_F(ImagesE2eTest, ADigestPinsTheImage) {
  std::string digest = std::string(Trim(registry_internal::MustRun(
      {"skopeo", "inspect", "--tls-verify=false", "--creds", "alice:s3cret", "--format",
       "{{.Digest}}", "docker://" + Image("v1")})));
  ASSERT_THAT(digest, ::testing::StartsWith("sha256:"));
  std::string pinned = fmt::format("127.0.0.1:{}/team/app@{}", registry_->port(), digest);
  ToolRun pulled = Images({"pull", pinned, "--authfile", Auth()});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.output;
  EXPECT_THAT(Images({}).output, HasSubstr(pinned));
  ToolRun wrong = Images(
      {"pull",
       fmt::format("127.0.0.1:{}/team/app@sha256:{}", registry_->port(), std::string(64, '0')),
       "--authfile", Auth()});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_THAT(wrong.output, HasSubstr("no such image"));
}

TEST_F(ImagesE2eTest, AnImageTheRegistryLacksIsNotFoundAndABadReferenceIsRefused) {
  ToolRun missing = Images({"pull", Image("v9"), "--authfile", Auth()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.output,
              HasSubstr("pulling image \"" + Image("v9") + "\": the registry has no such image"));
  ToolRun bad = Images({"pull", "Team/App", "--authfile", Auth()});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.output, HasSubstr("invalid image reference \"Team/App\""));
}

TEST_F(ImagesE2eTest, RmRemovesTheImageAndEverythingOnlyItUsed) {
  ASSERT_EQ(Images({"pull", Image("v1"), "--authfile", Auth()}).exit_code, 0);
  ToolRun removed = Images({"rm", Image("v1")});
  ASSERT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_THAT(removed.output, HasSubstr("Removed " + Image("v1")));
  EXPECT_TRUE(fs::is_empty(dir_ / "home/images/layers"));
  EXPECT_TRUE(fs::is_empty(dir_ / "home/images/oci/blobs/sha256"));
  ToolRun again = Images({"rm", Image("v1")});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.output, HasSubstr("no image " + Image("v1") + " here"));
}

class ImageRootE2eTest : public ImagesE2eTest {
 protected:
  void SetUp() override {
    ImagesE2eTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    TRAINYARD_NEEDS(geteuid() == 0, "root (an image's root is an overlay mount)");
    TRAINYARD_NEEDS(registry_internal::Have("bwrap"), "bubblewrap");
  }
};

TEST_F(ImageRootE2eTest, AContainerWithoutACommandRunsTheImagesEntrypointInItsRoot) {
  ToolRun run = RunInImage(", env: [{name: EXTRA, value: given}]");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("Pulling image \"" + Image("v1") + "\""));
  EXPECT_THAT(run.output, HasSubstr("hello from the image"));
  // The image's ENV under the pod's, its WORKDIR, its second layer's
  // deletion, and the pod's volume at its mountPath in the image's root.
  EXPECT_THAT(run.output, HasSubstr("greeting=hi extra=given pwd=/app"));
  EXPECT_THAT(run.output, HasSubstr("old-gone"));
  EXPECT_THAT(run.output, HasSubstr("kept"));
  EXPECT_THAT(run.output, HasSubstr("Succeeded"));
  // Again: the image is here, so nothing is pulled.
  ToolRun again = RunInImage("");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_THAT(again.output,
              HasSubstr("Container image \"" + Image("v1") + "\" already present on machine"));
  EXPECT_THAT(again.output, Not(HasSubstr("Pulling image")));
}

TEST_F(ImageRootE2eTest, CommandAndArgsOverrideTheImagesAsKubernetesSays) {
  ToolRun args_only = RunInImage(R"(, args: ["-c", "echo args-only $GREETING"])");
  ASSERT_EQ(args_only.exit_code, 0) << args_only.output;
  EXPECT_THAT(args_only.output, HasSubstr("args-only hi"));  // the image's ENTRYPOINT, /bin/sh
  ToolRun command = RunInImage(
      R"(, command: [/bin/busybox, sh, -c], args: ["echo command-too $PWD"], workingDir: /data)");
  ASSERT_EQ(command.exit_code, 0) << command.output;
  EXPECT_THAT(command.output, HasSubstr("command-too /data"));
  EXPECT_THAT(command.output, Not(HasSubstr("hello from the image")));
}

TEST_F(ImageRootE2eTest, ANeverPolicyWithoutTheImageIsTheKubeletsErrImageNeverPull) {
  ToolRun run = RunInImage(", imagePullPolicy: Never");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.output, HasSubstr("ErrImageNeverPull: container image \"" + Image("v1") +
                                    "\" is not present with pull policy of Never"));
}

TEST_F(ImageRootE2eTest, ThePodsImagePullSecretGivesThePullItsCredentials) {
  ToolRun refused = RunInImage("", {.host_credentials = false});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output, HasSubstr("ErrImagePull: pulling image \"" + Image("v1") +
                                        "\": the registry refused the credentials"));
  std::string config = fmt::format(R"({{"auths": {{"127.0.0.1:{}": {{"auth": "{}"}}}}}})",
                                   registry_->port(), Base64Encode("alice:s3cret"));
  ToolRun run = RunInImage("", {.host_credentials = false,
                                .pod = "      imagePullSecrets: [{name: regcred}]",
                                .documents = fmt::format(R"(
apiVersion: v1
kind: Secret
metadata: {{name: regcred}}
type: kubernetes.io/dockerconfigjson
data: {{.dockerconfigjson: {}}})",
                                                         Base64Encode(config))});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("hello from the image"));
  for (const auto& entry : fs::directory_iterator(dir_ / "home/images")) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr("auth-")))
        << "the credentials' file goes with the pull";
  }
}

}  // namespace
}  // namespace trainyard::cli::testing
