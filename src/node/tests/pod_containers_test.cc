// A pod's containers as the kubelet runs them: init containers in order,
// each to its end, before the containers; a failed one retried or failing
// the pod under its restart policy; sidecars beside the containers,
// stopped after them; every container with its own status and log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/tests/needs.h"
#include "node/tests/node_agent_fixture.h"

namespace trainyard::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class PodContainersTest : public testing::NodeAgentTest {
 protected:
  static api::Container Shell(const std::string& name, const std::string& script) {
    api::Container c;
    c.name = name;
    c.image = "busybox";
    c.command = {"sh", "-c", script};
    return c;
  }
  // A pod of `containers` after `init` (a sidecar's name starts "side").
  void AddPod(const std::string& name, const std::string& restart,
              const std::vector<api::Container>& init,
              const std::vector<api::Container>& containers) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    pod.spec.restart_policy = restart;
    pod.spec.termination_grace_period_seconds = 5;
    pod.spec.init_containers = init;
    for (api::Container& c : pod.spec.init_containers) {
      if (c.name.starts_with("side")) c.restart_policy = "Always";
    }
    pod.spec.containers = containers;
    ASSERT_TRUE(store_->Create(api::EncodePod(pod)).ok());
  }
  std::string File(const std::string& name) {
    std::ifstream in(dir_ / name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST_F(PodContainersTest, InitContainersRunInOrderBeforeTheContainers) {
  AddPod("p", "Never",
         {Shell("fetch", "echo one > data"), Shell("prepare", "test -e data && echo two >> data")},
         {Shell("main", "cat data")});
  // While the first runs, the pod initialises.
  ASSERT_TRUE(SyncUntil([&] {
    api::Pod pod = Pod("p");
    return !pod.status.init_container_statuses.empty();
  }));
  EXPECT_EQ(Pod("p").status.phase, "Pending");
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  EXPECT_EQ(Log("p"), "one\ntwo\n");
  api::Pod pod = Pod("p");
  ASSERT_EQ(pod.status.init_container_statuses.size(), 2u);
  for (const api::ContainerStatus& s : pod.status.init_container_statuses) {
    ASSERT_TRUE(s.state.terminated) << s.name;
    EXPECT_EQ(s.state.terminated->exit_code, 0);
  }
  EXPECT_EQ(pod.status.container_statuses.at(0).state.terminated->reason, "Completed");
}

TEST_F(PodContainersTest, AFailedInitContainerFailsANeverPodAndNothingAfterItRuns) {
  AddPod("p", "Never", {Shell("fetch", "echo cannot fetch; exit 2"), Shell("next", "touch next")},
         {Shell("main", "touch main")});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Failed"); }));
  api::Pod pod = Pod("p");
  EXPECT_EQ(pod.status.init_container_statuses.at(0).state.terminated->exit_code, 2);
  EXPECT_EQ(pod.status.init_container_statuses.at(1).state.waiting->reason, "PodInitializing");
  EXPECT_EQ(pod.status.container_statuses.at(0).state.waiting->reason, "PodInitializing");
  EXPECT_FALSE(fs::exists(dir_ / "next"));
  EXPECT_FALSE(fs::exists(dir_ / "main"));
  EXPECT_EQ(Log("p", "fetch"), "cannot fetch\n");
}

TEST_F(PodContainersTest, AFailedInitContainerIsRetriedUnderOnFailure) {
  AddPod("p", "OnFailure",
         {Shell("fetch", "if [ -e tried ]; then exit 0; else touch tried; exit 1; fi")},
         {Shell("main", "echo ran")});
  ASSERT_TRUE(SyncUntil([&] {
    api::Pod pod = Pod("p");
    return !pod.status.init_container_statuses.empty() &&
           pod.status.init_container_statuses[0].state.waiting &&
           pod.status.init_container_statuses[0].state.waiting->reason == "CrashLoopBackOff";
  }));
  EXPECT_EQ(Pod("p").status.phase, "Pending");
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  EXPECT_EQ(Pod("p").status.init_container_statuses.at(0).restart_count, 1);
  EXPECT_EQ(Log("p"), "ran\n");
}

TEST_F(PodContainersTest, ASidecarRunsBesideTheContainersAndIsStoppedAfterThem) {
  AddPod("p", "Never",
         {Shell("sidecar",
                "trap 'echo stopped >> side; exit 0' TERM; echo up > side; "
                "while true; do sleep 0.05; done"),
          Shell("after", "until [ -e side ]; do sleep 0.01; done")},
         {Shell("main", "cat side")});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); })) << Log("p", "sidecar");
  EXPECT_EQ(Log("p"), "up\n") << "it ran beside the main container";
  EXPECT_EQ(File("side"), "up\nstopped\n") << "stopped once the main container ended";
  api::Pod pod = Pod("p");
  EXPECT_TRUE(pod.status.init_container_statuses.at(0).state.terminated);
  EXPECT_EQ(pod.status.init_container_statuses.at(0).started, true);
  EXPECT_EQ(agent_->running(), 0u);
}

TEST_F(PodContainersTest, EveryContainerRunsWithItsOwnStatusAndLog) {
  AddPod("p", "Never", {}, {Shell("a", "echo from a"), Shell("b", "echo from b; exit 3")});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Failed"); }));
  api::Pod pod = Pod("p");
  ASSERT_EQ(pod.status.container_statuses.size(), 2u);
  EXPECT_EQ(pod.status.container_statuses[0].state.terminated->exit_code, 0);
  EXPECT_EQ(pod.status.container_statuses[1].state.terminated->exit_code, 3);
  EXPECT_EQ(Log("p", "a"), "from a\n");
  EXPECT_EQ(Log("p", "b"), "from b\n");
}

TEST_F(PodContainersTest, APodSucceedsOnlyOnceEveryContainerHas) {
  AddPod("p", "Never", {}, {Shell("quick", "exit 0"), Shell("slow", "sleep 0.3")});
  ASSERT_TRUE(SyncUntil([&] {
    api::Pod pod = Pod("p");
    return pod.status.container_statuses.size() == 2 &&
           pod.status.container_statuses[0].state.terminated;
  }));
  api::Pod pod = Pod("p");
  if (!pod.status.container_statuses[1].state.terminated) {
    EXPECT_EQ(pod.status.phase, "Running");
  }
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
}

// The store is the record: a new node agent (after a crash) never runs a
// finished init container again.
TEST_F(PodContainersTest, ANewNodeAgentDoesNotRunAFinishedInitContainerAgain) {
  AddPod("p", "OnFailure", {Shell("fetch", "echo fetched >> inits")},
         {Shell("main", "while [ ! -e go ]; do sleep 0.05; done")});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Running"); }));
  agent_ = MakeAgent("");  // the old one's processes die with it
  ASSERT_TRUE(SyncUntil([&] {
    api::Pod pod = Pod("p");
    return pod.status.container_statuses.at(0).state.waiting.has_value();
  }));
  std::ofstream(dir_ / "go").put('\n');
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  EXPECT_EQ(File("inits"), "fetched\n");
  EXPECT_EQ(Pod("p").status.container_statuses.at(0).restart_count, 1);
}

// A pod whose container writes to a readOnly emptyDir at /trainyard-ro,
// with a host alias.
void AddReadOnlyWriter(store::ObjectStore& store) {
  api::Pod pod;
  pod.metadata.name = "ro";
  pod.metadata.namespace_ = "default";
  pod.spec.restart_policy = "Never";
  pod.spec.extra =
      api::Json::parse(R"({"hostAliases": [{"ip": "10.1.2.3", "hostnames": ["db"]}]})");
  api::Volume volume;
  volume.name = "data";
  volume.empty_dir.emplace();
  pod.spec.volumes.push_back(volume);
  api::Container c;
  c.name = "main";
  c.image = "busybox";
  c.command = {"sh", "-c", "echo x > /trainyard-ro/f && echo wrote"};
  c.volume_mounts.push_back({.name = "data", .mount_path = "/trainyard-ro", .read_only = true});
  pod.spec.containers.push_back(c);
  ASSERT_TRUE(store.Create(api::EncodePod(pod)).ok());
}

// Whether a Warning event of `reason` was recorded.
bool Warned(store::ObjectStore& store, const std::string& reason) {
  bool said = false;
  EXPECT_TRUE(store
                  .Scan("Event", "default",
                        [&](const api::Json& e) {
                          said = said || (e["reason"] == reason && e["type"] == "Warning");
                        })
                  .ok());
  return said;
}

TEST_F(PodContainersTest, WithoutASandboxReadOnlyAndHostAliasesAreSaidToBeUnheeded) {
  AddReadOnlyWriter(*store_);
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("ro", "Succeeded"); })) << Log("ro");
  EXPECT_EQ(Log("ro"), "wrote\n");
  EXPECT_TRUE(Warned(*store_, "ReadOnlyNotEnforced"));
  EXPECT_TRUE(Warned(*store_, "HostAliasesNotApplied"));
}

TEST_F(PodContainersTest, InASandboxAReadOnlyMountIsReadOnly) {
  Sandboxes sandboxes(FindBwrap(), "bubblewrap is not installed");
  TRAINYARD_NEEDS(sandboxes.Problem().empty(), "bubblewrap that works here");
  agent_ = MakeAgent(TRAINYARD_SHIM, nullptr, false, &sandboxes);
  AddReadOnlyWriter(*store_);
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("ro", "Failed"); })) << Log("ro");
  EXPECT_THAT(Log("ro"), HasSubstr("Read-only file system"));
  EXPECT_FALSE(Warned(*store_, "ReadOnlyNotEnforced"));
  EXPECT_FALSE(Warned(*store_, "HostAliasesNotApplied"));
  agent_.reset();  // before the sandboxes it uses
}

// A replica past its memory limit is killed by the kernel and reported as
// on a cluster: OOMKilled, exit code 137, counted by the restart policy.
TEST_F(PodContainersTest, AReplicaPastItsMemoryLimitIsOomKilled) {
  if (!cgroups_.problem().empty())
    GTEST_SKIP() << "limits are not enforced here: " << cgroups_.problem();
  api::Container hog = Shell("main", "echo start; exec tail /dev/zero");
  hog.resources.limits["memory"] = *Quantity::Parse("32Mi");
  AddPod("p", "Never", {}, {hog});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Failed"); })) << Log("p");
  api::ContainerStatus c = Pod("p").status.container_statuses.at(0);
  ASSERT_TRUE(c.state.terminated);
  EXPECT_EQ(c.state.terminated->reason, "OOMKilled");
  EXPECT_EQ(c.state.terminated->exit_code, 137);
  bool said = false;
  ASSERT_TRUE(store_
                  ->Scan("Event", "default",
                         [&](const api::Json& e) {
                           said = said || (e["reason"] == "OOMKilling" && e["type"] == "Warning");
                         })
                  .ok());
  EXPECT_TRUE(said) << "an OOMKilling event";
  EXPECT_EQ(Log("p"), "start\n");
}

TEST_F(PodContainersTest, AReplicaWithinItsLimitsRunsHeldToThem) {
  if (!cgroups_.problem().empty())
    GTEST_SKIP() << "limits are not enforced here: " << cgroups_.problem();
  api::Container c = Shell("main", "cat /proc/self/cgroup");
  c.resources.limits["memory"] = *Quantity::Parse("64Mi");
  c.resources.limits["cpu"] = *Quantity::Parse("500m");
  AddPod("p", "Never", {}, {c});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); })) << Log("p");
  // Its own group (named by the container and the run) in its pod's
  // (named by the pod's uid), removed once it ended.
  std::string group = Pod("p").metadata.uid + "/main_0";
  EXPECT_THAT(Log("p"), HasSubstr(group));
  EXPECT_THAT(Log("p"), HasSubstr("/trainyard/"));
}

// Operators make a pod again under the same name while the old one's
// process is still stopping: the new one starts once it is gone.
TEST_F(PodContainersTest, ANewPodUnderTheNameOfOneStillStoppingStartsAfterIt) {
  AddPod("p", "Never", {},
         {Shell("main",
                "trap 'sleep 0.3; exit 0' TERM; echo up > old; while true; do sleep 0.05; done")});
  ASSERT_TRUE(SyncUntil([&] { return fs::exists(dir_ / "old"); }));
  ASSERT_TRUE(store_->Delete({"Pod", "default", "p"}).ok());
  ASSERT_TRUE(agent_->Sync().ok());  // the old one is told to stop
  AddPod("p", "Never", {}, {Shell("main", "echo new")});
  ASSERT_TRUE(SyncUntil([&] { return PhaseIs("p", "Succeeded"); }));
  EXPECT_EQ(Log("p"), "new\n");
}

// What `kubectl describe pod` shows: the kubelet's events, one per
// container and reason, counted up in a crash loop, gone with the pod.
TEST_F(PodContainersTest, TheKubeletsEventsAreRecordedCountedAndDeletedWithThePod) {
  AddPod("p", "OnFailure", {}, {Shell("main", "exit 1")});
  auto event = [&](const std::string& reason) {
    api::Json found;
    EXPECT_TRUE(store_
                    ->Scan("Event", "default",
                           [&](const api::Json& e) {
                             if (e["reason"] == reason) found = e;
                           })
                    .ok());
    return found;
  };
  for (int restarts = 0; restarts < 2; ++restarts) {
    ASSERT_TRUE(SyncUntil([&] {
      api::Json backoff = event("BackOff");
      return backoff.is_object() && backoff.value("count", 0) == restarts + 1;
    }));
    clock_.Advance(std::chrono::seconds(4));
  }
  api::Json started = event("Started");
  EXPECT_GE(started.value("count", 0), 2);
  EXPECT_EQ(started["involvedObject"]["fieldPath"], "spec.containers{main}");
  EXPECT_EQ(started["source"]["component"], "kubelet");
  EXPECT_EQ(started["message"], "Started container main");
  EXPECT_EQ(event("BackOff")["type"], "Warning");
  ASSERT_TRUE(store_->Delete({"Pod", "default", "p"}).ok());
  ASSERT_TRUE(SyncUntil([&] { return event("Started").is_null() && event("BackOff").is_null(); }));
}

}  // namespace
}  // namespace trainyard::node
