// `trainyard server` running pods in their images as kubectl sees it: a
// pod waits for its image with the kubelet's reasons and events, then runs
// in it; a pull that fails shows ErrImagePull and ImagePullBackOff; a pod
// asking for the machine's files gets them, unless --root image-only.
#include <gmock/gmock.h>
#include <unistd.h>

#include "cli/tests/server_fixture.h"
#include "cli/tests/test_registry.h"

namespace trainyard::cli::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class ImagesServerE2eTest : public ServerFixture {
 protected:
  void SetUp() override {
    ServerFixture::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string missing = TestRegistry::Missing();
    TRAINYARD_NEEDS(missing.empty(), missing);
    TRAINYARD_NEEDS(geteuid() == 0, "root (an image's root is an overlay mount)");
    registry_ = TestRegistry::Get();
    ASSERT_NE(registry_, nullptr) << "the test registry did not start";
  }
  // The server, with the registry's credentials as the host's or none.
  void StartImageServer(bool host_credentials = true) {
    std::string auth = host_credentials ? registry_->Auth() : (dir_ / "no-auth.json").string();
    StartServer({"--root", "image"}, {{"REGISTRY_AUTH_FILE", auth},
                                      {"CONTAINERS_REGISTRIES_CONF", registry_->RegistriesConf()}});
  }

  // A Job of one pod from `image`, printing what it finds.
  void ApplyJob(const std::string& name, const std::string& image,
                const std::string& pod_extra = "") {
    CommandResult applied = Kubectl({"apply", "-f",
                                     Write(name + ".yaml", fmt::format(R"(
apiVersion: batch/v1
kind: Job
metadata: {{name: {}}}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never{}
      containers:
        - name: main
          image: "{}"
          command: [/bin/sh, -c, 'echo "in the image: $GREETING $PWD"']
)",
                                                                       name, pod_extra, image))});
    ASSERT_EQ(applied.exit_code, 0) << applied.output;
  }

  TestRegistry* registry_ = nullptr;
};

TEST_F(ImagesServerE2eTest, APodWaitsForItsImageThenRunsInIt) {
  StartImageServer();
  ApplyJob("from-image", registry_->Image("v1"));
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "job", "from-image", "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Complete\")].status}"})
               .output == "True";
  })) << Kubectl({"describe", "pods"}).output;
  EXPECT_THAT(Kubectl({"logs", "job/from-image"}).output, HasSubstr("in the image: hi /app"));
  std::string events =
      Kubectl({"get", "events", "-o", "custom-columns=REASON:.reason,MESSAGE:.message"}).output;
  EXPECT_THAT(events, HasSubstr("Pulling image \"" + registry_->Image("v1") + "\""));
  EXPECT_THAT(events, HasSubstr("Successfully pulled image \"" + registry_->Image("v1") + "\" in"));
  // The pod's writable layer goes with it.
  auto roots = [&] {
    int n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(home_ / "server/pods", ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      n += it->path().filename() == "roots";
    }
    return n;
  };
  EXPECT_EQ(roots(), 1);
  ASSERT_EQ(Kubectl({"delete", "job", "from-image"}).exit_code, 0);
  EXPECT_TRUE(Eventually([&] { return roots() == 0; }, std::chrono::seconds(30)));
  // A second pod of the image: no pull.
  ApplyJob("again", registry_->Image("v1"));
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "events", "-o", "custom-columns=MESSAGE:.message"})
               .output.find("Container image \"" + registry_->Image("v1") +
                            "\" already present on machine") != std::string::npos;
  }));
}

TEST_F(ImagesServerE2eTest, AFailedPullShowsErrImagePullThenImagePullBackOff) {
  StartImageServer();
  ApplyJob("missing", registry_->Image("v9"));
  auto reason = [&] {
    return Kubectl({"get", "pods", "-l", "job-name=missing", "-o",
                    "jsonpath={.items[0].status.containerStatuses[0].state.waiting.reason}"})
        .output;
  };
  ASSERT_TRUE(Eventually([&] { return reason() == "ErrImagePull"; }, std::chrono::seconds(30)))
      << Kubectl({"describe", "pods"}).output;
  ASSERT_TRUE(Eventually([&] { return reason() == "ImagePullBackOff"; }, std::chrono::seconds(30)))
      << Kubectl({"describe", "pods"}).output;
  EXPECT_EQ(
      Kubectl({"get", "pods", "-l", "job-name=missing", "-o", "jsonpath={.items[0].status.phase}"})
          .output,
      "Pending");
  std::string described = Kubectl({"describe", "pods", "-l", "job-name=missing"}).output;
  EXPECT_THAT(described, HasSubstr("Failed to pull image \"" + registry_->Image("v9") +
                                   "\": pulling image \"" + registry_->Image("v9") +
                                   "\": the registry has no such image"));
  EXPECT_THAT(described, HasSubstr("Back-off pulling image"));
}

TEST_F(ImagesServerE2eTest, ThePodsImagePullSecretIsItsCredentials) {
  StartImageServer(/*host_credentials=*/false);
  CommandResult secret = Kubectl({"create", "secret", "docker-registry", "regcred",
                                  "--docker-server=127.0.0.1:" + std::to_string(registry_->port()),
                                  "--docker-username=alice", "--docker-password=s3cret"});
  ASSERT_EQ(secret.exit_code, 0) << secret.output;
  ApplyJob("with-secret", registry_->Image("v1"),
           "\n      imagePullSecrets: [{name: regcred}, {name: absent}]");
  ASSERT_TRUE(Eventually([&] {
    return Kubectl({"get", "job", "with-secret", "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Complete\")].status}"})
               .output == "True";
  })) << Kubectl({"describe", "pods"}).output;
  EXPECT_THAT(Kubectl({"get", "events", "-o", "custom-columns=MESSAGE:.message"}).output,
              HasSubstr("Unable to retrieve some image pull secrets (absent); attempting to pull "
                        "the image may not succeed."));
  for (const auto& entry : fs::directory_iterator(home_ / "images")) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::Not(HasSubstr("auth-")))
        << "the credentials' file goes with the pull";
  }
}

// A pod asking for the machine's files runs on them under the default
// (--root image), and is refused under --root image-only, saying why.
TEST_F(ImagesServerE2eTest, ImageOnlyRefusesAPodAskingForTheMachinesFiles) {
  std::string job = Write("on-host.yaml", R"(
apiVersion: batch/v1
kind: Job
metadata: {name: on-host}
spec:
  backoffLimit: 0
  template:
    metadata: {annotations: {trainyard.dev/root: host}}
    spec:
      restartPolicy: Never
      containers:
        - {name: main, image: none, command: [sh, -c, 'test -e /usr/bin/dpkg && echo on-the-host']}
)");
  auto condition = [&](const char* type) {
    return Kubectl({"get", "job", "on-host", "-o",
                    fmt::format("jsonpath={{.status.conditions[?(@.type==\"{}\")].status}}", type)})
               .output == "True";
  };
  StartServer({"--root", "image"}, {{"CONTAINERS_REGISTRIES_CONF", registry_->RegistriesConf()}});
  ASSERT_EQ(Kubectl({"apply", "-f", job}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return condition("Complete"); }))
      << Kubectl({"describe", "pods"}).output;
  EXPECT_THAT(Kubectl({"logs", "job/on-host"}).output, HasSubstr("on-the-host"));
  KillServer();
  fs::remove_all(home_);
  StartServer({"--root", "image-only"},
              {{"CONTAINERS_REGISTRIES_CONF", registry_->RegistriesConf()}});
  ASSERT_EQ(Kubectl({"apply", "-f", job}).exit_code, 0);
  ASSERT_TRUE(Eventually([&] { return condition("Failed"); }))
      << Kubectl({"describe", "pods"}).output;
  EXPECT_THAT(Kubectl({"get", "events", "-o", "custom-columns=MESSAGE:.message"}).output,
              HasSubstr("container main may not run on this machine's files: the pod's "
                        "trainyard.dev/root: host is refused here (--root image-only)"));
}

}  // namespace
}  // namespace trainyard::cli::testing
