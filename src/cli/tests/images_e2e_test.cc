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

  // A batch Job of one pod whose container `main` runs `image`, with an
  // emptyDir at /data/scratch; `container` is YAML flow mapping fields
  // after its name and image (", command: [...]"), `pod` YAML lines of the
  // pod spec, indented 6.
  static std::string Job(const std::string& image, const std::string& container = "",
                         const std::string& pod = "") {
    return fmt::format(R"(
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
                       pod, image, container);
  }

  // `trainyard run` (images by default) of Job(v1, container, setting.pod),
  // with the suite's credentials as the host's auth file.
  ToolRun RunInImage(const std::string& container, const RunSetting& setting = {}) {
    return RunManifests(setting.documents + "\n---" + Job(Image("v1"), container, setting.pod),
                        setting.host_credentials);
  }
  ToolRun RunManifests(const std::string& yaml, bool host_credentials = true,
                       const std::vector<std::string>& flags = {}) {
    std::ofstream(dir_ / "job.yaml") << yaml;
    std::string auth_file =
        host_credentials ? Auth() : (dir_ / "no-host-credentials.json").string();
    std::vector<std::string> argv = {TRAINYARD_BINARY, "run", "--home", (dir_ / "home").string()};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back((dir_ / "job.yaml").string());
    Result<ToolRun> run =
        RunTool(argv, {.env = {{"HOME", dir_.string()},
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
  EXPECT_THAT(pulled.output, HasSubstr("Fetching layer sha256:"));
  EXPECT_THAT(pulled.output, HasSubstr("Pulled " + Image("v1") + " (sha256:"));
  EXPECT_THAT(pulled.output, ::testing::ContainsRegex("2 layers, [0-9.]+ MiB \\(2 layers, "
                                                      "[0-9.]+ MiB fetched\\) in [0-9.]+s"));
  // :user shares v1's two layers and adds one: only that one is fetched.
  ToolRun user = Images({"pull", Image("user"), "--authfile", Auth()});
  ASSERT_EQ(user.exit_code, 0) << user.output;
  EXPECT_THAT(user.output, HasSubstr("here already"));
  EXPECT_THAT(user.output, ::testing::ContainsRegex("3 layers, [0-9.]+ MiB \\(1 layer, "
                                                    "[0-9.]+ (B|KiB) fetched\\)"));
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

// readOnlyRootFilesystem: the image's root cannot be written, even by
// root; its volumes can. Without it, root writes the root.
TEST_F(ImageRootE2eTest, AReadOnlyRootFilesystemLeavesOnlyTheVolumesWritable) {
  std::string writes = R"(command: [/bin/busybox, sh, -c, "touch /app/new 2>/dev/null && )"
                       R"(echo root-written; echo v > /data/scratch/f && echo volume-written"])";
  ToolRun read_only =
      RunManifests(Job(Image("v1"), ", securityContext: {readOnlyRootFilesystem: true}, " + writes),
                   true, {"--run-as", "root"});
  ASSERT_EQ(read_only.exit_code, 0) << read_only.output;
  EXPECT_THAT(read_only.output, HasSubstr("volume-written"));
  EXPECT_THAT(read_only.output, Not(HasSubstr("root-written")));
  ToolRun writable = RunManifests(Job(Image("v1"), ", " + writes), true, {"--run-as", "root"});
  ASSERT_EQ(writable.exit_code, 0) << writable.output;
  EXPECT_THAT(writable.output, HasSubstr("root-written"));
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
  // And how to do without the image.
  EXPECT_THAT(refused.output, HasSubstr("annotate its pod template trainyard.dev/root: host"));
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

// A pod that asks for the machine's files (trainyard.dev/root: host) runs
// the host's programs; in the same run another runs in its image, where the
// host's files are not.
TEST_F(ImageRootE2eTest, APodAskingForTheHostRunsOnItsFilesBesideOneInItsImage) {
  ToolRun run = RunInImage(
      R"(, command: [/bin/busybox, sh, -c, "test -e /usr/bin/dpkg || echo no-host-files-here"])",
      {.documents = R"(
apiVersion: batch/v1
kind: Job
metadata: {name: on-host}
spec:
  template:
    metadata: {annotations: {trainyard.dev/root: host}}
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: "no.such.registry.invalid/none", command: [sh, -c, "test -e /usr/bin/dpkg && echo on-the-host"]})"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("on-the-host"));
  EXPECT_THAT(run.output, HasSubstr("no-host-files-here"));
  EXPECT_THAT(run.output, Not(HasSubstr("no.such.registry.invalid")));  // never pulled
}

// A PyTorchJob's replicas, each in the image, find each other as on a
// cluster: the worker reaches the master at MASTER_ADDR:MASTER_PORT, named
// in the pod's /etc/hosts.
TEST_F(ImageRootE2eTest, APyTorchJobsReplicasInTheImageFindEachOther) {
  ToolRun run = RunManifests(fmt::format(R"yaml(
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: ranks}}
spec:
  pytorchReplicaSpecs:
    Master:
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: "{0}"
              # busybox's nc ends when its input does: the sleep holds it open.
              command: [/bin/busybox, sh, -c, 'echo "master got: $(sleep 3 | nc -l -p $MASTER_PORT)"']
    Worker:
      replicas: 1
      restartPolicy: Never
      template:
        spec:
          containers:
            - name: pytorch
              image: "{0}"
              command: [/bin/busybox, sh, -c, 'until echo "rank $RANK of $WORLD_SIZE" | nc $MASTER_ADDR $MASTER_PORT; do sleep 0.1; done']
)yaml",
                                         Image("v1")));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("master got: rank 1 of 2"));
  EXPECT_THAT(run.output, HasSubstr("PyTorchJob default/ranks: Succeeded"));
}

// A Katib Experiment whose trials run in the image: each trial's command
// gets its parameter, its printed metric is collected, the best is found.
TEST_F(ImageRootE2eTest, AnExperimentsTrialsRunInTheImage) {
  ToolRun run = RunManifests(fmt::format(R"(
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {{name: in-image}}
spec:
  objective: {{type: minimize, objectiveMetricName: loss}}
  algorithm: {{algorithmName: grid}}
  parallelTrialCount: 3
  maxTrialCount: 3
  parameters:
    - name: x
      parameterType: categorical
      feasibleSpace: {{list: ["3", "1", "2"]}}
  trialTemplate:
    primaryContainerName: trial
    trialParameters:
      - {{name: x, reference: x}}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        backoffLimit: 0
        template:
          spec:
            restartPolicy: Never
            containers:
              - name: trial
                image: "{}"
                args: ["-c", "test -x /bin/busybox && echo loss=${{trialParameters.x}}"]
)",
                                         Image("v1")));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("Experiment default/in-image: Succeeded"));
  EXPECT_THAT(run.output, HasSubstr("  x = 1\n"));
}

// Whom a container runs as in its image: trainyard's run-as rules first (a
// root trainyard's replicas are nobody's); where they leave it to the pod
// (--run-as root), the image's USER from its own /etc/passwd, or the pod's
// runAsUser, and runAsNonRoot refuses root.
TEST_F(ImageRootE2eTest, TheImagesUserOrThePodsRunsTheContainerWhereTrainyardLeavesItToThem) {
  auto job = [&](const std::string& image, const std::string& context) {
    return Job(image,
               R"(, command: [/bin/busybox, sh, -c, 'echo "uid=$(id -u) gid=$(id -g) )"
               R"(groups=$(id -G) home=$HOME"'])",
               context.empty() ? "" : "      " + context);
  };
  ToolRun nobody = RunManifests(job(Image("user"), ""));
  ASSERT_EQ(nobody.exit_code, 0) << nobody.output;
  EXPECT_THAT(nobody.output, HasSubstr("uid=65534 "));
  ToolRun app = RunManifests(job(Image("user"), ""), true, {"--run-as", "root"});
  ASSERT_EQ(app.exit_code, 0) << app.output;
  EXPECT_THAT(app.output, HasSubstr("uid=1000 gid=1000 groups=1000 44 home=/home/app"));
  ToolRun pod = RunManifests(
      job(Image("user"), "securityContext: {runAsUser: 1234, supplementalGroups: [44, 77]}"), true,
      {"--run-as", "root"});
  ASSERT_EQ(pod.exit_code, 0) << pod.output;
  EXPECT_THAT(pod.output, HasSubstr("uid=1234 gid=0 groups=0 44 77 "));
  ToolRun refused = RunManifests(job(Image("v1"), "securityContext: {runAsNonRoot: true}"), true,
                                 {"--run-as", "root"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output, HasSubstr("container has runAsNonRoot and image will run as root"));
}

// The kubelet's image GC after a run's pulls: over the high threshold
// (0% here, so always), the images the run does not use go; its own stay.
TEST_F(ImageRootE2eTest, ImagesNoPodUsesAreCollectedAboveTheHighThreshold) {
  auto job = [&](const std::string& image) {
    return Job(image, R"(, command: [/bin/busybox, "true"])");
  };
  ASSERT_EQ(RunManifests(job(Image("v1"))).exit_code, 0);
  // The default minimum age keeps v1, pulled a moment ago.
  std::vector<std::string> zero = {"--image-gc-high-threshold", "0", "--image-gc-low-threshold",
                                   "0"};
  ToolRun young = RunManifests(job(Image("user")), true, zero);
  ASSERT_EQ(young.exit_code, 0) << young.output;
  EXPECT_THAT(young.output, Not(HasSubstr("Removed image")));
  EXPECT_THAT(Images({}).output, HasSubstr(Image("v1")));
  zero.insert(zero.end(), {"--image-minimum-gc-age", "0s"});
  ToolRun collected = RunManifests(job(Image("user")), true, zero);
  ASSERT_EQ(collected.exit_code, 0) << collected.output;
  EXPECT_THAT(collected.output, HasSubstr("Removed image " + Image("v1") +
                                          " (image garbage collection: the image "
                                          "store's disk was "));
  std::string held = Images({}).output;
  EXPECT_THAT(held, Not(HasSubstr(Image("v1"))));
  EXPECT_THAT(held, HasSubstr(Image("user")));
  ToolRun refused =
      RunManifests(job(Image("user")), true,
                   {"--image-gc-high-threshold", "50", "--image-gc-low-threshold", "60"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.output, HasSubstr("--image-gc-low-threshold 60 is above "
                                        "--image-gc-high-threshold 50: want low <= high"));
}

// A pod given a GPU gets it in its image's root as the CDI spec says: the
// device node bound, the driver's file mounted, the spec's env, its
// create-symlinks and update-ldcache hooks. Here a simulated inventory's
// GPU, and a spec whose "GPU" is /dev/null.
TEST_F(ImageRootE2eTest, APodsGpusAreInItsRootAsTheCdiSpecSays) {
  fs::create_directories(dir_ / "cdi");
  std::ofstream(dir_ / "libfake.so.1") << "driver";
  std::ofstream(dir_ / "cdi/fake.yaml") << fmt::format(R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
  - name: "0"
    containerEdits:
      deviceNodes: [{{path: /dev/fake-gpu0, hostPath: /dev/null}}]
containerEdits:
  env: [FAKE_CDI=on]
  mounts: [{{hostPath: "{}", containerPath: /usr/lib/fake/libfake.so.1, options: [ro, bind]}}]
  hooks:
    - {{hookName: createContainer, path: /usr/bin/nvidia-ctk, args: [nvidia-ctk, hook, create-symlinks, --link, "libfake.so.1::/usr/lib/fake/libfake.so"]}}
    - {{hookName: createContainer, path: /usr/bin/nvidia-ctk, args: [nvidia-ctk, hook, update-ldcache, --folder, /usr/lib/fake]}}
)",
                                                       (dir_ / "libfake.so.1").string());
  std::string node = R"(
apiVersion: v1
kind: Node
metadata: {name: gpu-node}
status: {allocatable: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1", pods: "10"}}
---)";
  ToolRun run = RunManifests(
      node + Job(Image("v1"), R"(, resources: {limits: {nvidia.com/gpu: 1}}, )"
                              R"(command: [/bin/busybox, sh, -c, 'test -c /dev/fake-gpu0 && )"
                              R"(cat /usr/lib/fake/libfake.so && echo " gpu=$CUDA_VISIBLE_DEVICES )"
                              R"(cdi=$FAKE_CDI ld=$LD_LIBRARY_PATH"'])"),
      true, {"--cdi-spec-dir", (dir_ / "cdi").string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("driver gpu=0 cdi=on ld=/usr/lib/fake"));
}

// The same image pushed as `docker push` does (Docker's manifest and media
// types) and with zstd layers runs the same.
TEST_F(ImageRootE2eTest, DockersManifestsAndZstdLayersRunToo) {
  auto manifest = [&](const char* tag) {
    return registry_internal::MustRun({"skopeo", "inspect", "--raw", "--tls-verify=false",
                                       "--creds", "alice:s3cret", "docker://" + Image(tag)});
  };
  ASSERT_THAT(manifest("docker"),
              HasSubstr("application/vnd.docker.distribution.manifest.v2+json"));
  ASSERT_THAT(manifest("zstd"), HasSubstr("application/vnd.oci.image.layer.v1.tar+zstd"));
  for (const char* tag : {"docker", "zstd"}) {
    ToolRun run = RunManifests(Job(Image(tag)));
    ASSERT_EQ(run.exit_code, 0) << tag << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr("hello from the image")) << tag;
    EXPECT_THAT(run.output, HasSubstr("old-gone")) << tag;
  }
}

}  // namespace
}  // namespace trainyard::cli::testing
