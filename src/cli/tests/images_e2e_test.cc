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

#include "cli/tests/operator_fixture.h"
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

bool Have(const char* program) {
  return system(fmt::format("command -v {} >/dev/null", program).c_str()) == 0;
}

// Runs `argv`, failing the test when it fails.
std::string MustRun(const std::vector<std::string>& argv) {
  Result<ToolRun> run = RunTool(argv);
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run.ok() ? run->exit_code : -1, 0) << Join(argv, " ") << ":\n"
                                               << (run.ok() ? run->output : "");
  return run.ok() ? run->output : "";
}

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// How ImagesE2eTest::RunInImage runs its Job.
struct RunSetting {
  bool host_credentials = true;  // the suite's auth file as the host's
  std::string pod;               // YAML lines of the pod spec, indented 6
  std::string documents;         // YAML documents before the Job
};

class ImagesE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!Have("docker-registry") || !Have("umoci") || !Have("skopeo") || !Have("htpasswd") ||
        !fs::exists("/bin/busybox")) {
      return;  // each test says what is missing
    }
    suite_ = fs::temp_directory_path() / fmt::format("trainyard-images-e2e-{}", getpid());
    fs::remove_all(suite_);
    fs::create_directories(suite_);
    port_ = FreePort();
    MustRun({"sh", "-c", fmt::format("htpasswd -Bbn alice s3cret > {}/htpasswd", suite_.string())});
    std::ofstream(suite_ / "registry.yml") << fmt::format(
        "version: 0.1\nlog: {{level: error}}\nstorage: {{filesystem: {{rootdirectory: "
        "{0}/data}}}}\n"
        "http: {{addr: 127.0.0.1:{1}}}\nauth: {{htpasswd: {{realm: test, path: {0}/htpasswd}}}}\n",
        suite_.string(), port_);
    std::ofstream(suite_ / "registries.conf")
        << fmt::format("[[registry]]\nlocation = \"127.0.0.1:{}\"\ninsecure = true\n", port_);
    std::ofstream(suite_ / "auth.json")
        << fmt::format(R"({{"auths": {{"127.0.0.1:{}": {{"auth": "{}"}}}}}})", port_,
                       Base64Encode("alice:s3cret"));
    Result<runtime::Process> registry = runtime::Process::Start(
        {.argv = {"docker-registry", "serve", (suite_ / "registry.yml").string()},
         .env = {{"PATH", "/usr/bin:/bin"}},
         .log_path = (suite_ / "registry.log").string()});
    ASSERT_TRUE(registry.ok()) << registry.status().ToString();
    registry_ = new runtime::Process(*std::move(registry));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!Accepts(port_) && std::chrono::steady_clock::now() < deadline) {
      ASSERT_FALSE(registry_->WaitFor(std::chrono::milliseconds(20)).has_value())
          << "docker-registry ended at once";
    }
    BuildAndPush();
  }
  static void TearDownTestSuite() {
    if (registry_ != nullptr) registry_->Stop(std::chrono::seconds(5));
    delete registry_;
    registry_ = nullptr;
    if (!suite_.empty()) fs::remove_all(suite_);
  }

  // 127.0.0.1:<port>/team/app:v1: /bin/busybox and /app/run.sh in the
  // base layer, /app/old in it too and deleted by the second.
  static void BuildAndPush() {
    std::string layout = (suite_ / "layout").string();
    std::string bundle = (suite_ / "bundle").string();
    MustRun({"umoci", "init", "--layout", layout});
    MustRun({"umoci", "new", "--image", layout + ":v1"});
    MustRun({"umoci", "unpack", "--rootless", "--image", layout + ":v1", bundle});
    fs::path rootfs = fs::path(bundle) / "rootfs";
    fs::create_directories(rootfs / "bin");
    fs::create_directories(rootfs / "app");
    fs::copy_file("/bin/busybox", rootfs / "bin/busybox");
    fs::create_symlink("busybox", rootfs / "bin/sh");
    std::ofstream(rootfs / "app/run.sh")
        << "echo hello from the image\n"
           "echo \"greeting=$GREETING extra=$EXTRA pwd=$(pwd)\"\n"
           "if [ -e /app/old ]; then echo old-present; else echo old-gone; fi\n"
           "echo kept > /data/scratch/mark && cat /data/scratch/mark\n";
    // Readable by the replica's user (nobody), whatever the umask.
    fs::permissions(rootfs / "app/run.sh", fs::perms(0755));
    std::ofstream(rootfs / "app/old") << "deleted above\n";
    MustRun({"umoci", "repack", "--image", layout + ":v1", bundle});
    std::string upper = (suite_ / "upper").string();
    MustRun({"umoci", "unpack", "--rootless", "--image", layout + ":v1", upper});
    fs::remove(fs::path(upper) / "rootfs/app/old");
    MustRun({"umoci", "repack", "--image", layout + ":v1", upper});
    MustRun({"umoci", "config", "--image", layout + ":v1", "--config.entrypoint", "/bin/sh",
             "--config.cmd", "/app/run.sh", "--config.env", "GREETING=hi", "--config.workingdir",
             "/app"});
    MustRun({"skopeo", "copy", "--dest-tls-verify=false", "--dest-creds", "alice:s3cret",
             "oci:" + layout + ":v1", "docker://" + Image("v1")});
  }

  static std::string Image(const std::string& tag) {
    return fmt::format("127.0.0.1:{}/team/app:{}", port_, tag);
  }

  void SetUp() override {
    TRAINYARD_NEEDS(Have("docker-registry"), "docker-registry");
    TRAINYARD_NEEDS(Have("umoci") && Have("skopeo"), "umoci and skopeo");
    TRAINYARD_NEEDS(Have("htpasswd"), "apache2-utils");
    TRAINYARD_NEEDS(fs::exists("/bin/busybox"), "busybox-static");
    ASSERT_NE(registry_, nullptr);
    dir_ = FreshTestDir("trainyard-images-home");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // `trainyard images ARGS` with a home of the test's own and no credentials
  // but those given.
  ToolRun Images(std::vector<std::string> args) {
    std::vector<std::string> argv = {TRAINYARD_BINARY, "images"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--home", (dir_ / "home").string()});
    Result<ToolRun> run = RunTool(
        argv, {.env = {{"HOME", dir_.string()},
                       {"REGISTRY_AUTH_FILE", (dir_ / "no-auth.json").string()},
                       {"CONTAINERS_REGISTRIES_CONF", (suite_ / "registries.conf").string()}}});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ToolRun{.exit_code = -1};
  }
  std::string Auth() const { return (suite_ / "auth.json").string(); }

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
                         {"CONTAINERS_REGISTRIES_CONF", (suite_ / "registries.conf").string()}}});
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    return run.ok() ? *run : ToolRun{.exit_code = -1};
  }

  static inline fs::path suite_;
  static inline int port_ = 0;
  static inline runtime::Process* registry_ = nullptr;
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
  std::string digest = std::string(
      Trim(MustRun({"skopeo", "inspect", "--tls-verify=false", "--creds", "alice:s3cret",
                    "--format", "{{.Digest}}", "docker://" + Image("v1")})));
  ASSERT_THAT(digest, ::testing::StartsWith("sha256:"));
  std::string pinned = fmt::format("127.0.0.1:{}/team/app@{}", port_, digest);
  ToolRun pulled = Images({"pull", pinned, "--authfile", Auth()});
  ASSERT_EQ(pulled.exit_code, 0) << pulled.output;
  EXPECT_THAT(Images({}).output, HasSubstr(pinned));
  ToolRun wrong =
      Images({"pull", fmt::format("127.0.0.1:{}/team/app@sha256:{}", port_, std::string(64, '0')),
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
    TRAINYARD_NEEDS(Have("bwrap"), "bubblewrap");
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
  std::string config = fmt::format(R"({{"auths": {{"127.0.0.1:{}": {{"auth": "{}"}}}}}})", port_,
                                   Base64Encode("alice:s3cret"));
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
