// The engine as the API's backend (server::Backend): what `trainyard
// server` serves, and what `trainyard run` serves on loopback for trials
// that push their metrics.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"
#include "server/backend.h"

namespace trainyard::cli {

class EngineBackend final : public server::Backend {
 public:
  // `started`: when the engine started (RFC 3339), the Nodes' creation time.
  // `pod_log_dir`: on an API-only server, where whoever plays the kubelets
  // writes the containers' logs, laid out and formatted as the kubelet's
  // /var/log/pods (server/cri_log.h).
  // `read_back`: an API-only engine over a finished run's folder, whose
  // artifacts are served (an API-only server's engine has none).
  EngineBackend(engine::Engine& engine, std::string started, std::string pod_log_dir = "",
                bool read_back = false)
      : engine_(engine),
        started_(std::move(started)),
        pod_log_dir_(std::move(pod_log_dir)),
        read_back_(read_back) {}

  store::CommittedReader& store() override { return engine_.store().committed(); }
  Result<api::Json> Execute(Write write) override { return engine_.Execute(std::move(write)); }
  // Each node as a kubelet would report it: Ready, its allocatable, this
  // machine's address (every pod runs here, whichever node it is bound to).
  std::vector<api::Json> Nodes() const override;
  Result<LogRun> Log(const std::string& namespace_, const std::string& pod,
                     const std::string& container, bool previous) const override;
  std::string ArtifactsDir() const override {
    return engine_.api_only() && !read_back_ ? "" : engine_.artifacts_dir();
  }
  Duration ArtifactsRetention() const override { return engine_.artifacts_retention(); }
  // `trainyard exec --state <the engine's> -n NS -c CONTAINER POD -- COMMAND`.
  // A TrainJob against its runtime (controller/trainjob_admission.h), as
  // upstream's webhook; nothing on an API-only server, as kube-apiserver.
  Result<Admission> Admit(const api::ResourceType& type, const api::Json& object,
                          bool update) const override;
  Result<std::vector<std::string>> ExecArgv(const std::string& namespace_, const std::string& pod,
                                            const std::string& container,
                                            const std::vector<std::string>& command) const override;

 private:
  // What a kubelet would answer, from the logs under pod_log_dir_.
  Result<LogRun> KubeletLog(const std::string& namespace_, const std::string& pod,
                            const std::string& container, bool previous) const;

  engine::Engine& engine_;
  std::string started_;
  std::string pod_log_dir_;
  bool read_back_ = false;
};

}  // namespace trainyard::cli
