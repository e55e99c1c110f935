#include "cli/engine_backend.h"

#include <fmt/format.h>

#include <filesystem>

#include "api/json.h"
#include "controller/trainjob_admission.h"
#include "engine/inventory.h"
#include "runtime/local/log_file.h"
#include "server/cri_log.h"
#include "server/resources.h"

namespace trainyard::cli {

std::vector<api::Json> EngineBackend::Nodes() const {
  std::vector<api::Json> out;
  for (const scheduler::Node& node : engine_.nodes()) {
    api::Json doc = engine::NodeDocument(node);
    api::Json& meta = doc["metadata"];
    meta["uid"] = "node-" + node.name;
    meta["resourceVersion"] = "0";
    meta["creationTimestamp"] = started_;
    api::Json& status = doc["status"];
    status["conditions"] = {{{"type", "Ready"},
                             {"status", "True"},
                             {"reason", "TrainyardReady"},
                             {"message", "trainyard runs this node's pods on this machine"},
                             {"lastTransitionTime", started_}}};
    status["addresses"] = {{{"type", "InternalIP"}, {"address", "127.0.0.1"}},
                           {{"type", "Hostname"}, {"address", node.name}}};
    status["nodeInfo"] = {{"kubeletVersion", server::kKubernetesVersion},
                          {"operatingSystem", "linux"},
                          {"architecture", "amd64"},
                          {"containerRuntimeVersion", "trainyard://local-processes"}};
    out.push_back(std::move(doc));
  }
  return out;
}

Result<server::Backend::LogRun> EngineBackend::Log(const std::string& namespace_,
                                                   const std::string& pod,
                                                   const std::string& container,
                                                   bool previous) const {
  if (engine_.node() == nullptr) return KubeletLog(namespace_, pod, container, previous);
  std::string path = engine_.node()->LogPath(namespace_, pod, container);
  ASSIGN_OR_RETURN(runtime::LogSpan span, runtime::RunSpan(path, previous));
  return LogRun{.path = path, .begin = span.begin, .end = span.end};
}

Result<server::Backend::Admission> EngineBackend::Admit(const api::ResourceType& type,
                                                        const api::Json& object,
                                                        bool update) const {
  if (engine_.api_only()) return Admission{};
  ASSIGN_OR_RETURN(
      controller::Admission admitted,
      controller::AdmitAgainstOthers(engine_.store().committed(), type, object, update));
  return Admission{.errors = std::move(admitted.errors), .warnings = std::move(admitted.warnings)};
}

Result<std::vector<std::string>> EngineBackend::ExecArgv(
    const std::string& namespace_, const std::string& pod, const std::string& container,
    const std::vector<std::string>& command) const {
  if (engine_.api_only() || engine_.exec_program().empty()) {
    return UnavailableError(
        "this server runs no pods (--api-only): exec into them where their kubelet runs");
  }
  std::vector<std::string> argv = {engine_.exec_program(),
                                   "exec",
                                   "--own-process-group",
                                   "--state",
                                   engine_.state_dir(),
                                   "-n",
                                   namespace_,
                                   "-c",
                                   container,
                                   pod,
                                   "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

Result<server::Backend::LogRun> EngineBackend::KubeletLog(const std::string& namespace_,
                                                          const std::string& pod,
                                                          const std::string& container,
                                                          bool previous) const {
  ASSIGN_OR_RETURN(api::Json stored, engine_.store().committed().Get({"Pod", namespace_, pod}));
  // As the kubelet: `previous` is the run in lastState.terminated, and so
  // is a plain read while the container waits to restart (restartCount
  // still counts that run then).
  int run = 0;
  bool waiting = false;
  for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
    for (const api::Json& c : api::ArrayRefAt(stored, {"status", list})) {
      if (api::StringAt(c, {"name"}) != container) continue;
      run = static_cast<int>(api::IntAt(c, {"restartCount"}));
      waiting = api::ObjectAt(c, {"state"}).contains("waiting");
    }
  }
  if (previous && !waiting) --run;
  std::string path = server::CriLogPath(pod_log_dir_, namespace_, pod,
                                        api::StringAt(stored, {"metadata", "uid"}), container, run);
  std::error_code ec;
  // A current run's file may not be written yet: it is followed until it is.
  if (previous && (run < 0 || !std::filesystem::exists(path, ec))) {
    return NotFoundError(
        fmt::format("no run of container {} of pod {} before this one", container, pod));
  }
  return LogRun{.path = path, .cri = true};
}

}  // namespace trainyard::cli
