#include "scheduler/node_match.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace trainyard::scheduler {
namespace {

std::optional<int64_t> ParseInt(const std::string& text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool Contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// One matchExpressions (or matchFields) requirement against a value that
// may be absent. Gt and Lt compare integers; a value that is not one
// does not match, as in Kubernetes.
bool Matches(const api::NodeSelectorRequirement& r, const std::string* value) {
  const std::string& op = r.operator_;
  if (op == "In") return value != nullptr && Contains(r.values, *value);
  if (op == "NotIn") return value == nullptr || !Contains(r.values, *value);
  if (op == "Exists") return value != nullptr;
  if (op == "DoesNotExist") return value == nullptr;
  if (op != "Gt" && op != "Lt") return false;
  if (value == nullptr || r.values.size() != 1) return false;
  std::optional<int64_t> have = ParseInt(*value), bound = ParseInt(r.values[0]);
  if (!have || !bound) return false;
  return op == "Gt" ? *have > *bound : *have < *bound;
}

const std::string* Label(const Node& node, const std::string& key) {
  auto it = node.labels.find(key);
  return it == node.labels.end() ? nullptr : &it->second;
}

// An empty term matches nothing, as in Kubernetes.
bool TermMatches(const Node& node, const api::NodeSelectorTerm& term) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  for (const api::NodeSelectorRequirement& r : term.match_expressions) {
    if (!Matches(r, Label(node, r.key))) return false;
  }
  for (const api::NodeSelectorRequirement& r : term.match_fields) {
    if (r.key != "metadata.name" || !Matches(r, &node.name)) return false;
  }
  return true;
}

bool AffinityMatches(const Node& node, const PodConstraints& pod) {
  for (const auto& [key, value] : pod.node_selector) {
    const std::string* have = Label(node, key);
    if (have == nullptr || *have != value) return false;
  }
  if (!pod.required_affinity) return true;
  const auto& terms = pod.required_affinity->node_selector_terms;
  return std::any_of(terms.begin(), terms.end(),
                     [&](const api::NodeSelectorTerm& t) { return TermMatches(node, t); });
}

}  // namespace

bool Tolerates(const std::vector<api::Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(), [&](const api::Toleration& t) {
    if (!t.effect.empty() && t.effect != taint.effect) return false;
    if (t.operator_ == "Exists") return t.key.empty() || t.key == taint.key;
    return t.key == taint.key && t.value == taint.value;  // Equal, the default
  });
}

std::string StaticMismatch(const Node& node, const PodConstraints& pod) {
  if (node.unschedulable) return "node(s) were unschedulable";
  if (!AffinityMatches(node, pod)) return "node(s) didn't match Pod's node affinity/selector";
  for (const Taint& taint : node.taints) {
    if (taint.effect == "PreferNoSchedule" || Tolerates(pod.tolerations, taint)) continue;
    if (taint.value.empty()) return fmt::format("node(s) had untolerated taint {{{}}}", taint.key);
    return fmt::format("node(s) had untolerated taint {{{}: {}}}", taint.key, taint.value);
  }
  return "";
}

}  // namespace trainyard::scheduler
