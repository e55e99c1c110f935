// Validation of the scheduling objects, with the rules their upstreams
// enforce: Kueue's ClusterQueue webhook (flavors cover exactly the group's
// resources, limits only within a cohort, ...), PriorityClass's value
// bound, and non-negative quotas.
#include <fmt/format.h>

#include <set>

#include "api/validation_internal.h"

namespace trainyard::api::internal {
namespace {

void CheckOneOf(const std::string& value, const std::vector<std::string>& allowed,
                const FieldPath& path, ValidationResult& out) {
  if (value.empty()) return;
  for (const std::string& a : allowed) {
    if (a == value) return;
  }
  out.errors.push_back(FieldError::NotSupported(path, value, allowed));
}

void CheckNonNegative(const Quantity& q, const FieldPath& path, ValidationResult& out) {
  if (q.milli() < 0)
    out.errors.push_back(FieldError::Invalid(path, q.text(), "must be greater than or equal to 0"));
}

void ValidateFlavor(const FlavorQuotas& flavor, const ResourceGroup& group, bool in_cohort,
                    const FieldPath& path, ValidationResult& out) {
  if (flavor.name.empty()) out.errors.push_back(FieldError::Required(path.Child("name")));
  if (flavor.resources.size() != group.covered_resources.size()) {
    out.errors.push_back(FieldError::Invalid(
        path.Child("resources"), static_cast<int64_t>(flavor.resources.size()),
        fmt::format("must list the group's {} coveredResources, in the same order",
                    group.covered_resources.size())));
  }
  for (size_t k = 0; k < flavor.resources.size(); ++k) {
    const FlavorResourceQuota& r = flavor.resources[k];
    FieldPath at = path.Child("resources").Index(k);
    if (k < group.covered_resources.size() && r.name != group.covered_resources[k]) {
      out.errors.push_back(
          FieldError::Invalid(at.Child("name"), r.name,
                              fmt::format("must be {}, the group's coveredResources[{}]",
                                          group.covered_resources[k], k)));
    }
    CheckNonNegative(r.nominal_quota, at.Child("nominalQuota"), out);
    for (const auto& [field, limit] : {std::pair{"borrowingLimit", &r.borrowing_limit},
                                       std::pair{"lendingLimit", &r.lending_limit}}) {
      if (!*limit) continue;
      CheckNonNegative(**limit, at.Child(field), out);
      if (!in_cohort) {
        out.errors.push_back(
            FieldError::Forbidden(at.Child(field), "must not be set when spec.cohort is empty"));
      }
    }
    if (r.lending_limit && *r.lending_limit > r.nominal_quota) {
      out.errors.push_back(FieldError::Invalid(at.Child("lendingLimit"), r.lending_limit->text(),
                                               "must be less than or equal to nominalQuota"));
    }
  }
}

void ValidateClusterQueue(const ClusterQueueSpec& spec, ValidationResult& out) {
  FieldPath path("spec");
  std::set<std::string> covered;
  for (size_t i = 0; i < spec.resource_groups.size(); ++i) {
    const ResourceGroup& group = spec.resource_groups[i];
    FieldPath at = path.Child("resourceGroups").Index(i);
    if (group.covered_resources.empty()) {
      out.errors.push_back(FieldError::Required(at.Child("coveredResources")));
    }
    for (const std::string& name : group.covered_resources) {
      if (!covered.insert(name).second) {
        out.errors.push_back(FieldError::Duplicate(at.Child("coveredResources"), name));
      }
    }
    if (group.flavors.empty()) out.errors.push_back(FieldError::Required(at.Child("flavors")));
    for (size_t j = 0; j < group.flavors.size(); ++j) {
      ValidateFlavor(group.flavors[j], group, !spec.cohort.empty(), at.Child("flavors").Index(j),
                     out);
    }
  }
  CheckOneOf(spec.queueing_strategy, {"BestEffortFIFO", "StrictFIFO"},
             path.Child("queueingStrategy"), out);
  CheckOneOf(spec.stop_policy, {"None", "Hold", "HoldAndDrain"}, path.Child("stopPolicy"), out);
  if (spec.preemption) {
    FieldPath p = path.Child("preemption");
    CheckOneOf(spec.preemption->within_cluster_queue,
               {"Never", "LowerPriority", "LowerOrNewerEqualPriority"},
               p.Child("withinClusterQueue"), out);
    CheckOneOf(spec.preemption->reclaim_within_cohort, {"Never", "LowerPriority", "Any"},
               p.Child("reclaimWithinCohort"), out);
  }
  if (spec.fair_sharing && spec.fair_sharing->weight) {
    CheckNonNegative(*spec.fair_sharing->weight, path.Child("fairSharing").Child("weight"), out);
  }
}

// Kubernetes' HighestUserDefinablePriority.
constexpr int64_t kHighestUserPriority = 1'000'000'000;

void ValidatePriorityClass(const ObjectMeta& meta, const PriorityClassFields& fields,
                           ValidationResult& out) {
  if (!fields.value) {
    out.errors.push_back(FieldError::Required(FieldPath("value")));
  } else if (*fields.value > kHighestUserPriority) {
    out.errors.push_back(FieldError::Invalid(FieldPath("value"), *fields.value,
                                             "must be less than or equal to 1000000000"));
  }
  if (meta.name.starts_with("system-")) {
    out.errors.push_back(FieldError::Forbidden(FieldPath("metadata").Child("name"),
                                               "the system- prefix is reserved for Kubernetes"));
  }
  CheckOneOf(fields.preemption_policy, {"PreemptLowerPriority", "Never"},
             FieldPath("preemptionPolicy"), out);
}

}  // namespace

void ValidatePolicyObject(const PolicyObject& object, ValidationResult& out) {
  switch (object.kind) {
    case PolicyKind::kClusterQueue:
      ValidateClusterQueue(ClusterQueueSpecOf(object), out);
      break;
    case PolicyKind::kLocalQueue:
      if (LocalQueueSpecOf(object).cluster_queue.empty()) {
        out.errors.push_back(FieldError::Required(FieldPath("spec").Child("clusterQueue"),
                                                  "name the ClusterQueue this queue feeds"));
      }
      CheckOneOf(LocalQueueSpecOf(object).stop_policy, {"None", "Hold", "HoldAndDrain"},
                 FieldPath("spec").Child("stopPolicy"), out);
      break;
    case PolicyKind::kResourceFlavor:
      ValidateLabels(ResourceFlavorSpecOf(object).node_labels,
                     FieldPath("spec").Child("nodeLabels"), out);
      break;
    case PolicyKind::kPriorityClass:
      ValidatePriorityClass(object.metadata, PriorityClassOf(object), out);
      break;
    case PolicyKind::kResourceQuota:
      for (const auto& [key, q] : ResourceQuotaSpecOf(object).hard) {
        CheckNonNegative(q, FieldPath("spec").Child("hard").Key(key), out);
      }
      break;
  }
}

}  // namespace trainyard::api::internal
