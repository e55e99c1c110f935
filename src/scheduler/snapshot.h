// What the scheduler decides from: an immutable picture of the cluster.
// Nodes, every gang (pending, running or both), the queues and quotas, and
// the time. The snapshot is plain data; building it from stored objects is
// the caller's business (engine/), so the scheduler does no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/pod.h"
#include "scheduler/resources.h"

namespace trainyard::scheduler {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct Node {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  Amounts allocatable;  // a missing `pods` entry means no limit on pod count
  // Device ids per device resource (nvidia.com/gpu: "0".."7"; MIG names
  // list their instances). A pod asking for n of such a resource gets n
  // ids, lowest free first.
  std::map<std::string, std::vector<std::string>> devices;
  bool unschedulable = false;  // cordoned
};

// Where a pod may go: what Kubernetes' NodeAffinity, NodeName-less
// nodeSelector and TaintToleration filters check.
struct PodConstraints {
  std::map<std::string, std::string> node_selector;
  std::optional<api::NodeSelector> required_affinity;
  std::vector<api::Toleration> tolerations;
};

struct PendingPod {
  std::string name;
  PodResources resources;
  PodConstraints constraints;
};

struct BoundPod {
  std::string name;
  std::string node;
  PodResources resources;
  std::map<std::string, std::vector<std::string>> devices;
};

enum class PreemptionPolicy { kPreemptLowerPriority, kNever };

// A job's pods, scheduled together: `min_available` of them are placed at
// once or none is. Pods already bound count toward it.
struct Gang {
  std::string id;  // unique; the last tie-breaker in every ordering
  std::string namespace_;
  // The ClusterQueue the gang's LocalQueue points to; empty: no queue, only
  // nodes, priorities and ResourceQuotas limit it.
  std::string cluster_queue;
  int32_t priority = 0;
  PreemptionPolicy preemption = PreemptionPolicy::kPreemptLowerPriority;
  int64_t created = 0;  // arrival order (ms or a sequence); earlier goes first
  std::vector<PendingPod> pending;
  std::vector<BoundPod> bound;
  std::optional<int32_t> min_available;  // default: every pod
  // Placement is not tried unless this much is free in total (Volcano's
  // enqueue gate): a gang that cannot possibly start costs nothing.
  Amounts min_resources;
  // How long (ms) the gang may run with fewer than min_available pods bound
  // before all of it is evicted and queued again; nullopt: 60 s.
  std::optional<int64_t> schedule_timeout_ms;
  int64_t waiting_since = 0;  // when it last had pending pods and no full gang (ms)
  // How long it runs at most (activeDeadlineSeconds, ms): lets a pending
  // gang backfill ahead of a reservation, and tells when a running one ends.
  std::optional<int64_t> time_limit_ms;
  int64_t started = 0;       // when its pods were last bound (ms)
  bool terminating = false;  // being deleted or evicted: holds resources, frees them soon
  // It chose victims in an earlier decision (it waits with reason
  // Preempting): it goes before every other gang, so that what the victims
  // free is its, and a requeued victim cannot take it back.
  bool nominated = false;
};

struct Quota {
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // in a cohort, nullopt: no limit
  std::optional<int64_t> lending_limit;    // nullopt: all of nominal may be lent
};

enum class WithinQueuePreemption { kNever, kLowerPriority, kLowerOrNewerEqualPriority };
enum class ReclaimPreemption { kNever, kLowerPriority, kAny };
enum class QueueingStrategy { kBestEffortFifo, kStrictFifo };

struct ClusterQueue {
  std::string name;
  std::string cohort;                   // empty: borrows from and lends to nobody
  std::map<std::string, Quota> quotas;  // resource -> quota; others are not admitted
  WithinQueuePreemption within_queue = WithinQueuePreemption::kNever;
  ReclaimPreemption reclaim = ReclaimPreemption::kNever;
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  int64_t fair_weight_milli = 1000;
  bool stopped = false;  // stopPolicy Hold: admits nothing new
};

// A namespace's ResourceQuota: hard limits keyed as Kubernetes keys them
// (`pods`, `cpu`, `requests.cpu`, `limits.memory`,
// `requests.nvidia.com/gpu`, ...).
struct ResourceQuota {
  std::string namespace_;
  std::string name;
  Amounts hard;
};

enum class Policy { kBinPack, kSpread };

struct Snapshot {
  std::vector<Node> nodes;
  std::vector<Gang> gangs;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<ResourceQuota> resource_quotas;
  int64_t now = 0;  // ms
};

struct Options {
  Policy policy = Policy::kBinPack;
  bool fair_sharing = true;  // between the ClusterQueues of a cohort
};

}  // namespace trainyard::scheduler
