// What the API needs from the control plane behind it: the committed
// store to read and watch, a way to write through the control loop (so that a write is
// durable before it is acknowledged), this machine as a Node, and where a
// container's log is. The engine provides it in `trainyard server`; tests
// provide their own.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "api/registry.h"
#include "common/field_path.h"
#include "tracking/backend.h"

namespace trainyard::server {

class Backend : public tracking::TrackingBackend {
 public:
  // (From TrackingBackend: store() reads and watches what is durable,
  // never a write a crash could take back; writes go through Execute, run
  // where the control plane's writes run, answered once durable.)

  // The nodes pods are placed on, as core/v1 Nodes: this machine, or the
  // inventory a --nodes file declares.
  virtual std::vector<api::Json> Nodes() const = 0;
  // Where a container's current run (or, with `previous`, the run before)
  // logs: a file and a byte range of it (end -1: to the end, growing).
  // NOT_FOUND when there was no such run.
  struct LogRun {
    std::string path;
    int64_t begin = 0;
    int64_t end = -1;
    bool cri = false;  // in the kubelet's CRI format (server/cri_log.h), not plain text
  };
  virtual Result<LogRun> Log(const std::string& namespace_, const std::string& pod,
                             const std::string& container, bool previous) const = 0;
  // What admission refuses in `object` (valid on its own, about to be
  // created, or with `update` to replace the stored one) for what it
  // says of other objects, as upstream's webhooks do (a TrainJob against
  // its runtime), and the warnings it is admitted with. None here: an
  // API-only server is a kube-apiserver, with no webhooks of its own.
  struct Admission {
    FieldErrors errors;
    std::vector<std::string> warnings;
  };
  // `object` is one of `type`, as the API's route to it says.
  virtual Result<Admission> Admit(const api::ResourceType& /*type*/, const api::Json& /*object*/,
                                  bool /*update*/) const {
    return Admission{};
  }
  // The program that runs `command` beside a running container of a pod,
  // in its environment, directory and user (`trainyard exec`); UNAVAILABLE
  // where no pod runs here (an API-only server has no kubelet).
  virtual Result<std::vector<std::string>> ExecArgv(
      const std::string& namespace_, const std::string& pod, const std::string& container,
      const std::vector<std::string>& command) const = 0;
};

}  // namespace trainyard::server
