// A Backend over a real in-memory store, for the handler's tests: writes
// run at once, in the caller's thread, and are counted.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "server/backend.h"
#include "store/sqlite_store.h"

namespace trainyard::server {

// A small valid PyTorchJob, "mnist", as a request body.
inline constexpr const char* kTestJob = R"({
  "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
  "metadata": {"name": "mnist"},
  "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {
    "containers": [{"name": "pytorch", "image": "x", "command": ["true"]}]}}}}}})";

class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(const Clock& clock) {
    store_ = std::move(*store::SqliteStore::Open({.clock = &clock}));
  }
  store::CommittedReader& store() override { return store_->committed(); }
  // The store itself, for tests to set the scene with.
  store::SqliteStore& writable() { return *store_; }
  Result<api::Json> Execute(Write write) override {
    ++writes;
    return write(*store_);
  }
  std::vector<api::Json> Nodes() const override {
    std::vector<api::Json> nodes;
    for (const std::string& name : node_names) {
      nodes.push_back({{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}});
    }
    return nodes;
  }
  // The inventory's nodes, in its order.
  std::vector<std::string> node_names = {"box"};
  Result<LogRun> Log(const std::string&, const std::string&, const std::string&,
                     bool previous) const override {
    if (previous) return NotFoundError("none");
    return LogRun{.path = log_path, .cri = log_cri};
  }
  // The command as given, after `exec_prefix` (a shell, say): what runs
  // "in" a pod here.
  Result<std::vector<std::string>> ExecArgv(
      const std::string&, const std::string&, const std::string&,
      const std::vector<std::string>& command) const override {
    std::vector<std::string> argv = exec_prefix;
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }
  std::string ArtifactsDir() const override { return artifacts_dir; }
  Duration ArtifactsRetention() const override { return artifacts_retention; }
  std::string log_path;
  std::string artifacts_dir;  // "": none, as an API-only server
  Duration artifacts_retention = std::chrono::hours(1);
  bool log_cri = false;
  std::vector<std::string> exec_prefix;
  int writes = 0;

 private:
  std::unique_ptr<store::SqliteStore> store_;
};

}  // namespace trainyard::server
