// The node agent's test fixture: real processes (sh and coreutils) and an
// in-memory store; the fake clock only drives restart back-off.
#pragma once

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/tests/test_dir.h"
#include "node/node_agent.h"
#include "store/sqlite_store.h"

namespace trainyard::node::testing {

namespace fs = std::filesystem;

// Whether `pid`, a `sleep`, ends within `deadline` (waiting on its pidfd);
// one still running then is killed, so that no test leaves it behind.
inline bool EndsWithin(pid_t pid, std::chrono::milliseconds deadline) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return true;  // gone, and reaped
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string argv0;
  std::getline(cmdline, argv0, '\0');
  pollfd pfd{fd, POLLIN, 0};
  bool ended = argv0 != "sleep" || poll(&pfd, 1, static_cast<int>(deadline.count())) == 1;
  if (!ended) syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
  close(fd);
  return ended;
}

class NodeAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("trainyard-node-test");
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock_}));
    agent_ = MakeAgent("");
  }
  std::unique_ptr<NodeAgent> MakeAgent(const std::string& shim, store::ObjectStore* store = nullptr,
                                       bool wait_for_config = false,
                                       const Sandboxes* sandboxes = nullptr) {
    return std::make_unique<NodeAgent>(NodeAgentOptions{.store = store ? store : store_.get(),
                                                        .clock = &clock_,
                                                        .logs_dir = (dir_ / "logs").string(),
                                                        .pods_dir = (dir_ / "pods").string(),
                                                        .default_working_dir = dir_.string(),
                                                        .base_env = {{"PATH", "/usr/bin:/bin"}},
                                                        .shim = shim,
                                                        .wait_for_config = wait_for_config,
                                                        .cgroups = &cgroups_,
                                                        .sandboxes = sandboxes});
  }
  void TearDown() override {
    agent_.reset();
    cgroups_.RemoveScope();
    fs::remove_all(dir_);
  }

  void AddPod(const std::string& name, const std::string& script, const std::string& restart,
              std::vector<std::string> command = {},
              const std::function<void(api::Pod&)>& edit = nullptr) {
    api::Pod pod;
    pod.metadata.name = name;
    pod.metadata.namespace_ = "default";
    pod.spec.restart_policy = restart;
    api::Container c;
    c.name = "main";
    c.image = "busybox";
    c.command = command.empty() ? std::vector<std::string>{"sh", "-c", script} : command;
    api::EnvVar rank;
    rank.name = "RANK";
    rank.value = "3";
    c.env.push_back(rank);
    pod.spec.containers.push_back(c);
    if (edit) edit(pod);
    ASSERT_TRUE(store_->Create(api::EncodePod(pod)).ok());
  }

  api::Pod Pod(const std::string& name) {
    return *api::DecodePod(*store_->Get({"Pod", "default", name}));
  }

  // Syncs, waiting for process exits in between, until `done` or 10 s.
  bool SyncUntil(const std::function<bool()>& done) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      EXPECT_TRUE(agent_->Sync().ok());
      if (done()) return true;
      std::vector<pollfd> fds;
      for (int fd : agent_->PollFds()) fds.push_back({fd, POLLIN, 0});
      poll(fds.data(), fds.size(), 100);
    }
    return false;
  }
  // The pid a script wrote to `file`, once it is there.
  pid_t WrittenPid(const std::string& file) {
    pid_t pid = 0;
    SyncUntil([&] { return static_cast<bool>(std::ifstream(dir_ / file) >> pid); });
    return pid;
  }
  bool PhaseIs(const std::string& name, const std::string& phase) {
    return Pod(name).status.phase == phase;
  }
  // Every pod's phase and first container's state, for a failure's message.
  std::string Phases() {
    std::string out;
    (void)store_->Scan("Pod", "default", [&](const api::Json& doc) {
      out += api::StringAt(doc, {"metadata", "name"}) + ": " +
             api::StringAt(doc, {"status", "phase"}) + " " +
             api::Json(api::ArrayRefAt(doc, {"status", "containerStatuses"})).dump() + "\n";
    });
    return out;
  }
  std::string Log(const std::string& pod, const std::string& container = "main") {
    std::ifstream in(agent_->LogPath("default", pod, container));
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path dir_;
  // A scope of this test process's own: test binaries run side by side,
  // each with its agents.
  Cgroups cgroups_ = Cgroups::Detect().Scoped(ScopeOf("node-test-" + std::to_string(getpid())));
  FakeClock clock_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<NodeAgent> agent_;
};

}  // namespace trainyard::node::testing
