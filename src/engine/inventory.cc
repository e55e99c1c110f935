#include "engine/inventory.h"

#include <fmt/format.h>

#include <fstream>
#include <set>
#include <sstream>

#include "api/json.h"
#include "api/pod_object.h"
#include "api/yaml.h"
#include "common/strings.h"

namespace trainyard::engine {
namespace {

std::vector<std::string> Ids(int64_t count) {
  std::vector<std::string> ids;
  for (int64_t i = 0; i < count; ++i) ids.push_back(std::to_string(i));
  return ids;
}

// What a Node's spec says of scheduling, of the types Kubernetes gives
// them: a value of another type is refused, never read as its default (a
// string "true" would otherwise leave the node schedulable).
Status CheckNodeSpec(const api::Json& spec, const std::string& at) {
  const api::Json& unschedulable = api::ValueAt(spec, "unschedulable");
  if (!unschedulable.is_null() && !unschedulable.is_boolean()) {
    return InvalidArgumentError(fmt::format("{}: spec.unschedulable: must be true or false", at));
  }
  const api::Json& taints = api::ValueAt(spec, "taints");
  if (!taints.is_null() && !taints.is_array()) {
    return InvalidArgumentError(fmt::format("{}: spec.taints: must be a list", at));
  }
  for (size_t i = 0; i < taints.size(); ++i) {  // null: none
    if (!taints[i].is_object()) {
      return InvalidArgumentError(fmt::format("{}: spec.taints[{}]: must be an object", at, i));
    }
    for (const char* field : {"key", "value", "effect"}) {
      const api::Json& value = api::ValueAt(taints[i], field);
      if (!value.is_null() && !value.is_string()) {
        return InvalidArgumentError(
            fmt::format("{}: spec.taints[{}].{}: must be a string", at, i, field));
      }
    }
    if (api::StringAt(taints[i], "key").empty() || api::StringAt(taints[i], "effect").empty()) {
      return InvalidArgumentError(fmt::format(
          "{}: spec.taints[{}]: Required value: a taint has a key and an effect", at, i));
    }
  }
  return OkStatus();
}

}  // namespace

bool IsNodeDocument(const api::Json& doc) { return api::StringAt(doc, "kind") == "Node"; }

Result<scheduler::Node> NodeFromDocument(const api::Json& doc, const std::string& where) {
  if (!IsNodeDocument(doc)) {
    return InvalidArgumentError(fmt::format("{}: expected kind: Node", where));
  }
  scheduler::Node node;
  const api::Json& meta = api::ObjectAt(doc, "metadata");
  node.name = api::StringAt(meta, "name");
  if (node.name.empty())
    return InvalidArgumentError(fmt::format("{}: metadata.name: Required value", where));
  std::string at = fmt::format("{}: node {}", where, node.name);
  if (const api::Json& given = api::ValueAt(meta, "labels");
      !given.is_null() && !given.is_object()) {
    return InvalidArgumentError(fmt::format("{}: metadata.labels: must be a map", at));
  }
  const api::Json& labels = api::ObjectAt(meta, "labels");
  for (const auto& [key, value] : labels.items()) {
    if (!value.is_string())
      return InvalidArgumentError(fmt::format("{}: metadata.labels.{}: must be a string", at, key));
    node.labels[key] = value.get<std::string>();
  }
  node.labels.emplace("kubernetes.io/hostname", node.name);
  const api::Json& spec = api::ObjectAt(doc, "spec");
  RETURN_IF_ERROR(CheckNodeSpec(spec, at));
  node.unschedulable = api::BoolAt(spec, "unschedulable");
  for (const api::Json& t : api::ArrayRefAt(spec, "taints")) {
    node.taints.push_back(
        {api::StringAt(t, "key"), api::StringAt(t, "value"), api::StringAt(t, "effect")});
  }
  const api::Json& status = api::ObjectAt(doc, "status");
  // allocatable, else capacity when allocatable is not given at all.
  const api::Json* resources = api::FindAt(status, {"allocatable"});
  if (resources == nullptr) resources = api::FindAt(status, {"capacity"});
  if (resources == nullptr || !resources->is_object() || resources->empty()) {
    return InvalidArgumentError(
        fmt::format("{}: status.allocatable: Required value: list what the node offers, "
                    "e.g. {{cpu: \"8\", memory: 32Gi, nvidia.com/gpu: \"4\"}}",
                    at));
  }
  for (const auto& [name, value] : resources->items()) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    Result<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) {
      return InvalidArgumentError(
          fmt::format("{}: status.allocatable.{}: {}", at, name, q.status().message()));
    }
    node.allocatable[name] = q->milli();
  }
  auto gpus = node.allocatable.find(std::string(scheduler::kGpuResource));
  if (gpus != node.allocatable.end()) {
    std::string listed =
        api::StringAt(meta, {"annotations", std::string(api::kGpusAnnotation).c_str()});
    std::vector<std::string> ids = SplitNonEmpty(listed, ',');
    node.devices[std::string(scheduler::kGpuResource)] =
        ids.empty() ? Ids(gpus->second / 1000) : ids;
  }
  return node;
}

scheduler::Node MachineNode(const std::string& name, const runtime::MachineFacts& facts) {
  scheduler::Node node;
  node.name = name;
  node.labels = {{"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"}};
  node.allocatable["cpu"] = facts.cpus * 1000;
  node.allocatable["memory"] = facts.memory_bytes * 1000;
  if (!facts.gpus.empty()) {
    node.allocatable[std::string(scheduler::kGpuResource)] =
        static_cast<int64_t>(facts.gpus.size()) * 1000;
    std::vector<std::string>& ids = node.devices[std::string(scheduler::kGpuResource)];
    for (const runtime::Gpu& gpu : facts.gpus) ids.push_back(gpu.index);
  }
  return node;
}

Result<std::vector<scheduler::Node>> ReadNodesFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(fmt::format("{}: cannot read the nodes file", path));
  std::stringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(std::vector<api::SourceDocument> docs, api::ParseManifests(text.str(), path));
  std::vector<scheduler::Node> nodes;
  std::set<std::string> names;
  for (const api::SourceDocument& doc : docs) {
    ASSIGN_OR_RETURN(scheduler::Node node,
                     NodeFromDocument(doc.value, fmt::format("{}:{}", path, doc.line)));
    if (!names.insert(node.name).second) {
      return InvalidArgumentError(
          fmt::format("{}:{}: node {} is listed twice", path, doc.line, node.name));
    }
    nodes.push_back(std::move(node));
  }
  if (nodes.empty())
    return InvalidArgumentError(fmt::format("{}: no Node objects in the file", path));
  return nodes;
}

api::Json NodeDocument(const scheduler::Node& node) {
  api::Json allocatable = api::Json::object();
  for (const auto& [name, milli] : node.allocatable) {
    allocatable[name] = Quantity::FromMilli(milli).text();
  }
  api::Json taints = api::Json::array();
  for (const scheduler::Taint& t : node.taints) {
    api::Json taint = {{"key", t.key}, {"effect", t.effect}};
    if (!t.value.empty()) taint["value"] = t.value;
    taints.push_back(std::move(taint));
  }
  api::Json spec = api::Json::object();
  if (!taints.empty()) spec["taints"] = std::move(taints);
  if (node.unschedulable) spec["unschedulable"] = true;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", node.name}, {"labels", node.labels}}},
          {"spec", std::move(spec)},
          {"status", {{"capacity", allocatable}, {"allocatable", allocatable}}}};
}

}  // namespace trainyard::engine
