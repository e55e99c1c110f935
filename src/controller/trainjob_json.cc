#include "controller/trainjob_json.h"

#include <set>

#include "api/well_known.h"

namespace trainyard::controller::trainjob {
namespace {

// The lists of the pod spec that Kubernetes merges by name.
const std::set<std::string>& NamedLists() {
  static const std::set<std::string> kLists = {
      "containers",       "initContainers",  "env",           "volumes", "volumeMounts",
      "imagePullSecrets", "schedulingGates", "replicatedJobs"};
  return kLists;
}

}  // namespace

Json* FindNamed(Json& list, std::string_view name) {
  if (!list.is_array()) return nullptr;
  for (Json& item : list) {
    if (item.is_object() && api::StringAt(item, "name") == name) return &item;
  }
  return nullptr;
}

void UpsertNamed(Json& list, Json item) {
  if (!list.is_array()) list = Json::array();
  if (Json* found = FindNamed(list, api::StringAt(item, "name"))) {
    *found = std::move(item);
  } else {
    list.push_back(std::move(item));
  }
}

void StrategicMerge(Json& into, const Json& patch) {
  if (!patch.is_object() || !into.is_object()) {
    into = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) {
    if (NamedLists().contains(key) && value.is_array()) {
      Json& list = into[key];
      if (!list.is_array()) list = Json::array();
      for (const Json& item : value) {
        Json* found = FindNamed(list, api::StringAt(item, "name"));
        if (found != nullptr) {
          StrategicMerge(*found, item);
        } else {
          list.push_back(item);
        }
      }
    } else if (value.is_object() && into.contains(key) && into[key].is_object() &&
               key != "securityContext" && key != "affinity") {
      // Maps (labels, nodeSelector) and nested objects merge key by key;
      // securityContext and affinity are replaced whole, as upstream.
      StrategicMerge(into[key], value);
    } else {
      into[key] = value;
    }
  }
}

Json EnvValue(std::string name, std::string value) {
  return Json{{"name", std::move(name)}, {"value", std::move(value)}};
}

Json EnvField(std::string name, std::string field_path) {
  return Json{{"name", std::move(name)},
              {"valueFrom", {{"fieldRef", {{"fieldPath", std::move(field_path)}}}}}};
}

void UpsertPort(Json& container, int port) {
  Json& ports = container["ports"];
  if (!ports.is_array()) ports = Json::array();
  for (const Json& p : ports) {
    if (p.is_object() && api::IntAt(p, "containerPort") == port) return;
  }
  ports.push_back(Json{{"containerPort", port}, {"protocol", "TCP"}});
}

Json& PodSpecOf(Json& replicated_job) {
  return replicated_job["template"]["spec"]["template"]["spec"];
}

Json* ContainerOf(Json& replicated_job, std::string_view name) {
  return FindNamed(PodSpecOf(replicated_job)["containers"], name);
}

std::string AncestorStepOf(const Json& replicated_job) {
  const Json* labels = api::FindAt(replicated_job, {"template", "metadata", "labels"});
  if (labels == nullptr || !labels->is_object()) return "";
  return api::StringAt(*labels, std::string(api::kAncestorStepLabel).c_str());
}

}  // namespace trainyard::controller::trainjob
