#include "scheduler/tests/scenario_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "scheduler/tests/random_world.h"

namespace trainyard::scheduler::testing {
namespace {

std::string Amount(const std::string& resource, int64_t milli) {
  if (resource == "memory" || resource.ends_with(".memory")) {
    int64_t bytes = milli / 1000;
    if (bytes % kMi == 0) return fmt::format("{}Mi", bytes / kMi);
    return std::to_string(bytes);
  }
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return fmt::format("{}m", milli);
}

std::string AmountsText(const Amounts& amounts) {
  std::vector<std::string> parts;
  for (const auto& [name, milli] : amounts)
    parts.push_back(fmt::format("{}: {}", name, Amount(name, milli)));
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

std::string Seconds(int64_t ms) { return fmt::format("{}", static_cast<double>(ms) / 1000); }

std::string RequirementsText(const std::vector<api::NodeSelectorRequirement>& list) {
  std::vector<std::string> parts;
  for (const auto& r : list) {
    parts.push_back(fmt::format("{{key: {}, operator: {}, values: [{}]}}", r.key, r.operator_,
                                fmt::join(r.values, ", ")));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string PodText(const PendingPod& pod) {
  const PodConstraints& c = pod.constraints;
  std::string out =
      fmt::format("{{name: {}, requests: {}", pod.name, AmountsText(pod.resources.requests));
  if (!pod.resources.limits.empty()) out += ", limits: " + AmountsText(pod.resources.limits);
  if (!c.node_selector.empty()) {
    std::vector<std::string> parts;
    for (const auto& [k, v] : c.node_selector) parts.push_back(k + ": " + v);
    out += fmt::format(", nodeSelector: {{{}}}", fmt::join(parts, ", "));
  }
  if (c.required_affinity) {
    std::vector<std::string> terms;
    for (const auto& t : c.required_affinity->node_selector_terms) {
      terms.push_back(fmt::format("{{matchExpressions: {}, matchFields: {}}}",
                                  RequirementsText(t.match_expressions),
                                  RequirementsText(t.match_fields)));
    }
    out += fmt::format(", affinity: {{nodeSelectorTerms: [{}]}}", fmt::join(terms, ", "));
  }
  if (!c.tolerations.empty()) {
    std::vector<std::string> parts;
    for (const auto& t : c.tolerations) {
      parts.push_back(fmt::format("{{key: \"{}\", operator: {}, value: \"{}\", effect: \"{}\"}}",
                                  t.key, t.operator_, t.value, t.effect));
    }
    out += fmt::format(", tolerations: [{}]", fmt::join(parts, ", "));
  }
  return out + "}";
}

std::string NodeText(const Node& n) {
  std::string out =
      fmt::format("- {{name: {}, allocatable: {}", n.name, AmountsText(n.allocatable));
  std::vector<std::string> labels, taints;
  for (const auto& [k, v] : n.labels) labels.push_back(k + ": " + v);
  if (!labels.empty()) out += fmt::format(", labels: {{{}}}", fmt::join(labels, ", "));
  for (const Taint& t : n.taints) {
    taints.push_back(
        fmt::format("{{key: {}, value: \"{}\", effect: {}}}", t.key, t.value, t.effect));
  }
  if (!taints.empty()) out += fmt::format(", taints: [{}]", fmt::join(taints, ", "));
  if (n.unschedulable) out += ", unschedulable: true";
  return out + "}\n";
}

std::string QueueText(const ClusterQueue& q) {
  static constexpr const char* kWithin[] = {"Never", "LowerPriority", "LowerOrNewerEqualPriority"};
  static constexpr const char* kReclaim[] = {"Never", "LowerPriority", "Any"};
  std::vector<std::string> quotas;
  for (const auto& [name, quota] : q.quotas) {
    std::string text = "nominal: " + Amount(name, quota.nominal);
    if (quota.borrowing_limit) text += ", borrowingLimit: " + Amount(name, *quota.borrowing_limit);
    if (quota.lending_limit) text += ", lendingLimit: " + Amount(name, *quota.lending_limit);
    quotas.push_back(fmt::format("{}: {{{}}}", name, text));
  }
  return fmt::format(
      "- {{name: {}, cohort: \"{}\", quotas: {{{}}}, withinClusterQueue: {}, reclaimWithinCohort: "
      "{}, queueingStrategy: {}, weight: {}, stopped: {}}}\n",
      q.name, q.cohort, fmt::join(quotas, ", "), kWithin[static_cast<int>(q.within_queue)],
      kReclaim[static_cast<int>(q.reclaim)],
      q.strategy == QueueingStrategy::kStrictFifo ? "StrictFIFO" : "BestEffortFIFO",
      Amount("weight", q.fair_weight_milli), q.stopped);
}

std::string GangText(const Gang& g) {
  std::string out = fmt::format(
      "- id: {}\n  namespace: {}\n  queue: \"{}\"\n  priority: {}\n  created: {}\n  waitingSince: "
      "{}\n  started: {}\n",
      g.id, g.namespace_, g.cluster_queue, g.priority, Seconds(g.created), Seconds(g.waiting_since),
      Seconds(g.started));
  if (g.preemption == PreemptionPolicy::kNever) out += "  preemptionPolicy: Never\n";
  if (g.min_available) out += fmt::format("  minAvailable: {}\n", *g.min_available);
  if (g.schedule_timeout_ms)
    out += fmt::format("  scheduleTimeout: {}\n", Seconds(*g.schedule_timeout_ms));
  if (g.time_limit_ms) out += fmt::format("  timeLimit: {}\n", Seconds(*g.time_limit_ms));
  if (g.terminating) out += "  terminating: true\n";
  out += "  pods:\n";
  for (const PendingPod& p : g.pending) out += "  - " + PodText(p) + "\n";
  out += "  bound:\n";
  for (const BoundPod& b : g.bound) {
    std::string gpus;
    if (b.devices.contains(kGpu))
      gpus = fmt::format(", gpus: [\"{}\"]", fmt::join(b.devices.at(kGpu), "\", \""));
    out += fmt::format("  - {{name: {}, node: {}, requests: {}{}}}\n", b.name, b.node,
                       AmountsText(b.resources.requests), gpus);
  }
  return out;
}

}  // namespace

std::string ScenarioText(const Snapshot& s, const ScheduleOptions& options) {
  std::string out = fmt::format("name: shrunk\npolicy: {}\nfairSharing: {}\nnow: {}\nnodes:\n",
                                options.policy == Policy::kSpread ? "Spread" : "BinPack",
                                options.fair_sharing, Seconds(s.now));
  for (const Node& n : s.nodes) out += NodeText(n);
  out += "clusterQueues:\n";
  for (const ClusterQueue& q : s.cluster_queues) out += QueueText(q);
  out += "resourceQuotas:\n";
  for (const ResourceQuota& rq : s.resource_quotas) {
    out += fmt::format("- {{namespace: {}, name: {}, hard: {}}}\n", rq.namespace_, rq.name,
                       AmountsText(rq.hard));
  }
  out += "gangs:\n";
  for (const Gang& g : s.gangs) out += GangText(g);
  return out;
}

}  // namespace trainyard::scheduler::testing
