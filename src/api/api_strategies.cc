#include <algorithm>

#include "api/api_strategy.h"
#include "api/pod_object.h"
#include "api/well_known.h"

namespace trainyard::api {
namespace {

// The objects of an array at `key` of `parent`, if it is one; nothing else
// is touched.
template <class Visit>
void EachObjectAt(Json& parent, const char* key, const Visit& visit) {
  if (!parent.is_object() || !parent.contains(key) || !parent[key].is_array()) return;
  for (Json& item : parent[key]) {
    if (item.is_object()) visit(item);
  }
}

// An empty `properties` is dropped from a stored CRD schema, as
// kube-apiserver stores it.
void DropEmptyProperties(Json& schema) {
  if (!schema.is_object()) return;
  auto properties = schema.find("properties");
  if (properties != schema.end() && properties->is_object() && properties->empty()) {
    schema.erase(properties);
  }
  for (auto& [key, value] : schema.items()) {
    if (value.is_object()) DropEmptyProperties(value);
    if (value.is_array()) {
      for (Json& item : value) DropEmptyProperties(item);
    }
  }
}

}  // namespace

ApiStrategy NamespaceStrategy() {
  return {.name_problems = Dns1123LabelProblems,
          .prepare_for_write =
              [](Json& ns) {
                ns["spec"] = {{"finalizers", {"kubernetes"}}};
                ns["status"] = {{"phase", "Active"}};
              },
          .deletion = Deletion::kWithContents,
          .undeletable_names = {"default"}};
}

ApiStrategy NodeStrategy() {
  return {
      // Not ready until the node lifecycle controller says so: the
      // admission plugin TaintNodesByCondition taints every new Node.
      .prepare_for_create =
          [](Json& node) {
            Json& taints = node["spec"]["taints"];
            if (!taints.is_array()) taints = Json::array();
            bool tainted = std::any_of(taints.begin(), taints.end(), [](const Json& t) {
              return StringAt(t, "key") == "node.kubernetes.io/not-ready";
            });
            if (!tainted)
              taints.push_back({{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}});
          },
      .kubelet_registered = true};
}

ApiStrategy PodStrategy() {
  return {.validate_kept = [](const Json& body) -> FieldErrors {
            Result<Pod> pod = DecodePod(body);
            if (!pod.ok())
              return {FieldError::Invalid(FieldPath("spec"), "", pod.status().message())};
            if (pod->spec.containers.empty()) {
              return {FieldError::Required(FieldPath("spec").Child("containers"), "")};
            }
            return {};
          },
          // The mark is its controller's (controller/tracked_owner.h): a
          // pod created through the API cannot claim a job's run and
          // output folder by carrying it.
          .prepare_for_create =
              [](Json& pod) {
                if (Json* annotations = FindAt(pod, {"metadata", "annotations"})) {
                  if (annotations->is_object())
                    annotations->erase(std::string(kTrackedOwnerAnnotation));
                }
              },
          .initial_status = {{"phase", "Pending"}},
          .deletion = Deletion::kGraceful};
}

ApiStrategy EventStrategy() {
  return {.validate_kept = [](const Json& body) -> FieldErrors {
    const Json* involved = FindAt(body, {"involvedObject"});
    if (involved == nullptr || !involved->is_object()) {
      return {FieldError::Required(FieldPath("involvedObject"), "")};
    }
    return {};
  }};
}

ApiStrategy LeaseStrategy() {
  return {.validate_kept = [](const Json& body) -> FieldErrors {
    const Json* seconds = FindAt(body, {"spec", "leaseDurationSeconds"});
    if (seconds != nullptr && (!seconds->is_number_integer() || seconds->get<int64_t>() <= 0)) {
      return {FieldError::Invalid(FieldPath("spec").Child("leaseDurationSeconds"), seconds->dump(),
                                  "must be greater than 0")};
    }
    return {};
  }};
}

ApiStrategy CrdStrategy() {
  return {.kube_defaults = [](Json& crd) {
    if (!crd.contains("spec")) return;
    EachObjectAt(crd["spec"], "versions", [](Json& version) {
      if (version.contains("schema")) DropEmptyProperties(version["schema"]);
    });
  }};
}

ApiStrategy WebhookConfigurationStrategy() {
  return {.kube_defaults = [](Json& config) {
    EachObjectAt(config, "webhooks", [](Json& hook) {
      EachObjectAt(hook, "rules", [](Json& rule) {
        if (!rule.contains("scope")) rule["scope"] = "*";
      });
    });
  }};
}

}  // namespace trainyard::api
