#include "cli/engine_backend.h"

#include <fmt/format.h>

#include "engine/inventory.h"
#include "runtime/local/log_file.h"

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
    status["nodeInfo"] = {{"kubeletVersion", "v1.29.0-trainyard"},
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
  // As kube-apiserver answers for a pod no kubelet runs.
  if (engine_.node() == nullptr) {
    return InvalidArgumentError(fmt::format(
        "pod {:?} has no log here: this server is API-only (--api-only) and runs no pods", pod));
  }
  std::string path = engine_.node()->LogPath(namespace_, pod, container);
  ASSIGN_OR_RETURN(runtime::LogSpan span, runtime::RunSpan(path, previous));
  return LogRun{.path = path, .begin = span.begin, .end = span.end};
}

}  // namespace trainyard::cli
