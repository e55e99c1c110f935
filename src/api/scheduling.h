// The objects that configure scheduling, as their upstreams define them:
// Kueue's ClusterQueue, LocalQueue and ResourceFlavor
// (kueue.x-k8s.io/v1beta1), PriorityClass (scheduling.k8s.io/v1) and the
// namespaced ResourceQuota (v1). They share one C++ type, PolicyObject:
// the kind, metadata, and the kind's own fields kept as the JSON its typed
// struct below decodes (so unknown fields are caught and reported).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/pod.h"
#include "api/reflect.h"
#include "api/well_known.h"

namespace trainyard::api {

inline constexpr std::string_view kKueueGroupVersion = "kueue.x-k8s.io/v1beta1";
inline constexpr std::string_view kSchedulingGroupVersion = "scheduling.k8s.io/v1";

struct FlavorResourceQuota {
  static constexpr bool kReflected = true;
  std::string name;
  Quantity nominal_quota;
  std::optional<Quantity> borrowing_limit;
  std::optional<Quantity> lending_limit;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("nominalQuota", s.nominal_quota);
    v("borrowingLimit", s.borrowing_limit);
    v("lendingLimit", s.lending_limit);
  }
  bool operator==(const FlavorResourceQuota&) const = default;
};

struct FlavorQuotas {
  static constexpr bool kReflected = true;
  std::string name;
  std::vector<FlavorResourceQuota> resources;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("resources", s.resources);
  }
  bool operator==(const FlavorQuotas&) const = default;
};

struct ResourceGroup {
  static constexpr bool kReflected = true;
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("coveredResources", s.covered_resources);
    v("flavors", s.flavors);
  }
  bool operator==(const ResourceGroup&) const = default;
};

struct ClusterQueuePreemption {
  static constexpr bool kReflected = true;
  std::string within_cluster_queue;   // Never (default) | LowerPriority | LowerOrNewerEqualPriority
  std::string reclaim_within_cohort;  // Never (default) | LowerPriority | Any
  Json borrow_within_cohort;          // accepted, not acted on
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("withinClusterQueue", s.within_cluster_queue);
    v("reclaimWithinCohort", s.reclaim_within_cohort);
    v("borrowWithinCohort", s.borrow_within_cohort);
  }
  bool operator==(const ClusterQueuePreemption&) const = default;
};

struct FairSharing {
  static constexpr bool kReflected = true;
  std::optional<Quantity> weight;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("weight", s.weight);
  }
  bool operator==(const FairSharing&) const = default;
};

struct ClusterQueueSpec {
  static constexpr bool kReflected = true;
  std::string cohort;
  std::vector<ResourceGroup> resource_groups;
  std::string queueing_strategy;  // BestEffortFIFO (default) | StrictFIFO
  std::optional<ClusterQueuePreemption> preemption;
  std::string stop_policy;  // None (default) | Hold | HoldAndDrain
  std::optional<FairSharing> fair_sharing;
  // Accepted so that Kueue manifests apply unchanged; not acted on.
  Json namespace_selector;
  Json flavor_fungibility;
  Json admission_checks;
  Json admission_checks_strategy;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("cohort", s.cohort);
    v("resourceGroups", s.resource_groups);
    v("queueingStrategy", s.queueing_strategy);
    v("preemption", s.preemption);
    v("stopPolicy", s.stop_policy);
    v("fairSharing", s.fair_sharing);
    v("namespaceSelector", s.namespace_selector);
    v("flavorFungibility", s.flavor_fungibility);
    v("admissionChecks", s.admission_checks);
    v("admissionChecksStrategy", s.admission_checks_strategy);
  }
  bool operator==(const ClusterQueueSpec&) const = default;
};

struct LocalQueueSpec {
  static constexpr bool kReflected = true;
  std::string cluster_queue;
  std::string stop_policy;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("clusterQueue", s.cluster_queue);
    v("stopPolicy", s.stop_policy);
  }
  bool operator==(const LocalQueueSpec&) const = default;
};

struct ResourceFlavorSpec {
  static constexpr bool kReflected = true;
  std::map<std::string, std::string> node_labels;
  std::vector<Toleration> tolerations;
  Json node_taints;
  std::string topology_name;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("nodeLabels", s.node_labels);
    v("tolerations", s.tolerations);
    v("nodeTaints", s.node_taints);
    v("topologyName", s.topology_name);
  }
  bool operator==(const ResourceFlavorSpec&) const = default;
};

struct ResourceQuotaSpec {
  static constexpr bool kReflected = true;
  ResourceList hard;
  Json scopes;          // accepted, not acted on
  Json scope_selector;  // accepted, not acted on
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("hard", s.hard);
    v("scopes", s.scopes);
    v("scopeSelector", s.scope_selector);
  }
  bool operator==(const ResourceQuotaSpec&) const = default;
};

// PriorityClass keeps its fields at the top of the document, beside metadata.
struct PriorityClassFields {
  static constexpr bool kReflected = true;
  std::optional<int32_t> value;
  std::optional<bool> global_default;
  std::string description;
  std::string preemption_policy;  // PreemptLowerPriority (default) | Never
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("value", s.value);
    v("globalDefault", s.global_default);
    v("description", s.description);
    v("preemptionPolicy", s.preemption_policy);
  }
  bool operator==(const PriorityClassFields&) const = default;
};

enum class PolicyKind {
  kClusterQueue,
  kLocalQueue,
  kResourceFlavor,
  kPriorityClass,
  kResourceQuota
};

struct PolicyKindInfo {
  PolicyKind kind;
  std::string_view name;  // "ClusterQueue"
  std::string_view group_version;
  bool namespaced;
  // Its fields are at the top level, beside metadata (a PriorityClass's
  // value), not under spec.
  bool fields_at_top_level = false;
};

const std::vector<PolicyKindInfo>& AllPolicyKinds();
const PolicyKindInfo* PolicyKindFromName(std::string_view name);

struct PolicyObject {
  PolicyKind kind = PolicyKind::kClusterQueue;
  ObjectMeta metadata;
  // The kind's fields: `spec` for all but PriorityClass, whose top-level
  // fields sit here instead. `status` is what the scheduler reports.
  Json spec;
  Json status;
  const PolicyKindInfo& info() const;
  bool operator==(const PolicyObject&) const = default;
};

// The typed view of a policy object's fields (decoded from its JSON; an
// object that passed validation always decodes).
ClusterQueueSpec ClusterQueueSpecOf(const PolicyObject& object);
LocalQueueSpec LocalQueueSpecOf(const PolicyObject& object);
ResourceFlavorSpec ResourceFlavorSpecOf(const PolicyObject& object);
ResourceQuotaSpec ResourceQuotaSpecOf(const PolicyObject& object);
PriorityClassFields PriorityClassOf(const PolicyObject& object);

// Decodes the kind's fields from `doc` into `object`, reporting every
// unknown or mistyped field.
void DecodePolicyFields(const Json& doc, PolicyObject& object, FieldErrors& errors);
Json EncodePolicyObject(const PolicyObject& object);

}  // namespace trainyard::api
