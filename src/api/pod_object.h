// core/v1 Pod: what the job controller creates for each replica and the
// node agent runs. The status models what the engine reports (phase,
// container state, restarts, exit codes); other fields are kept verbatim.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/pod.h"
#include "api/reflect.h"
#include "api/well_known.h"
#include "common/status.h"

namespace trainyard::api {

struct ContainerStateWaiting {
  static constexpr bool kReflected = true;
  std::string reason;
  std::string message;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("reason", s.reason);
    v("message", s.message);
  }
  bool operator==(const ContainerStateWaiting&) const = default;
};

struct ContainerStateRunning {
  static constexpr bool kReflected = true;
  std::string started_at;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("startedAt", s.started_at);
  }
  bool operator==(const ContainerStateRunning&) const = default;
};

struct ContainerStateTerminated {
  static constexpr bool kReflected = true;
  int32_t exit_code = 0;
  std::optional<int32_t> signal;
  std::string reason;  // Completed | Error | OOMKilled | ...
  std::string message;
  std::string started_at;
  std::string finished_at;
  Json extra;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("exitCode", s.exit_code);
    v("signal", s.signal);
    v("reason", s.reason);
    v("message", s.message);
    v("startedAt", s.started_at);
    v("finishedAt", s.finished_at);
  }
  bool operator==(const ContainerStateTerminated&) const = default;
};

struct ContainerState {
  static constexpr bool kReflected = true;
  std::optional<ContainerStateWaiting> waiting;
  std::optional<ContainerStateRunning> running;
  std::optional<ContainerStateTerminated> terminated;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("waiting", s.waiting);
    v("running", s.running);
    v("terminated", s.terminated);
  }
  bool operator==(const ContainerState&) const = default;
};

struct ContainerStatus {
  static constexpr bool kReflected = true;
  std::string name;
  ContainerState state;
  ContainerState last_state;
  std::optional<bool> ready;
  std::optional<bool> started;  // it has run (a sidecar: the next init container may start)
  int32_t restart_count = 0;
  std::string image;
  std::string container_id;  // "trainyard://<pid>"
  Json extra;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("state", s.state);
    v("lastState", s.last_state);
    v("ready", s.ready);
    v("started", s.started);
    v("restartCount", s.restart_count);
    v("image", s.image);
    v("containerID", s.container_id);
  }
  bool operator==(const ContainerStatus&) const = default;
};

// PodScheduled False/Unschedulable is how a pod says it waits for room.
struct PodCondition {
  static constexpr bool kReflected = true;
  std::string type;    // PodScheduled, Ready, ...
  std::string status;  // True | False | Unknown
  std::string reason;
  std::string message;
  std::string last_transition_time;
  Json extra;  // lastProbeTime, observedGeneration
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("type", s.type);
    v("status", s.status);
    v("reason", s.reason);
    v("message", s.message);
    v("lastTransitionTime", s.last_transition_time);
  }
  bool operator==(const PodCondition&) const = default;
};

struct PodStatus {
  static constexpr bool kReflected = true;
  std::string phase;  // Pending | Running | Succeeded | Failed | Unknown
  std::string reason;
  std::string message;
  std::string host_ip;
  std::string pod_ip;
  std::string start_time;
  std::vector<ContainerStatus> init_container_statuses;
  std::vector<ContainerStatus> container_statuses;
  std::vector<PodCondition> conditions;
  Json extra;  // qosClass, ...
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("phase", s.phase);
    v("reason", s.reason);
    v("message", s.message);
    v("hostIP", s.host_ip);
    v("podIP", s.pod_ip);
    v("startTime", s.start_time);
    v("initContainerStatuses", s.init_container_statuses);
    v("containerStatuses", s.container_statuses);
    v("conditions", s.conditions);
  }
  bool operator==(const PodStatus&) const = default;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  bool operator==(const Pod&) const = default;
};

// Succeeded or Failed: the pod will run nothing again.
inline bool HasFinished(const Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

Result<Pod> DecodePod(const Json& document);
// Whether `document` is a pod (its kind; a pod's reference, too).
bool IsPodObject(const Json& document);
Json EncodePod(const Pod& pod);
// A pod's status as core/v1 writes it: what Go's encoding never omits is
// there even when empty or zero (imageID, restartCount, exitCode, ...).
Json EncodePodStatus(const PodStatus& status);

}  // namespace trainyard::api
