// The `patchStrategy:"merge"` / `patchMergeKey` tags of the Kubernetes
// types trainyard serves (k8s.io/api core/v1, batch/v1, apps/v1 and the
// rest), as facts: every list not named here is replaced whole by a
// strategic merge patch, as there.
#include <map>
#include <string>

#include "server/strategic_merge.h"

namespace trainyard::server {
namespace {

using Fields = std::map<std::string, PatchSchema, std::less<>>;

PatchSchema MergedBy(std::string key, Fields fields = {}) {
  return {.merge = true, .merge_key = std::move(key), .fields = std::move(fields)};
}
PatchSchema Values() { return {.merge = true}; }
PatchSchema Object(Fields fields) { return {.fields = std::move(fields)}; }

PatchSchema ObjectMeta() {
  return Object({{"finalizers", Values()}, {"ownerReferences", MergedBy("uid")}});
}

// metav1.Condition and the core conditions: by type.
Fields StatusConditions() { return {{"conditions", MergedBy("type")}}; }

PatchSchema Container() {
  return MergedBy("name", {{"ports", MergedBy("containerPort")},
                           {"env", MergedBy("name")},
                           {"volumeMounts", MergedBy("mountPath")},
                           {"volumeDevices", MergedBy("devicePath")}});
}

PatchSchema PodSpec() {
  return Object({{"volumes", MergedBy("name")},
                 {"initContainers", Container()},
                 {"containers", Container()},
                 {"ephemeralContainers", Container()},
                 {"imagePullSecrets", MergedBy("name")},
                 {"hostAliases", MergedBy("ip")},
                 {"topologySpreadConstraints", MergedBy("topologyKey")},
                 {"schedulingGates", MergedBy("name")},
                 {"resourceClaims", MergedBy("name")}});
}

PatchSchema PodTemplateSpec() { return Object({{"metadata", ObjectMeta()}, {"spec", PodSpec()}}); }

PatchSchema Kind(Fields spec, Fields status = {}) {
  Fields top = {{"metadata", ObjectMeta()}};
  if (!spec.empty()) top["spec"] = Object(std::move(spec));
  if (!status.empty()) top["status"] = Object(std::move(status));
  return Object(std::move(top));
}

std::map<std::string, PatchSchema, std::less<>> MakeSchemas() {
  std::map<std::string, PatchSchema, std::less<>> out;
  PatchSchema pod = Kind(
      {},
      {{"conditions", MergedBy("type")}, {"podIPs", MergedBy("ip")}, {"hostIPs", MergedBy("ip")}});
  pod.fields["spec"] = PodSpec();
  out["/Pod"] = std::move(pod);
  out["/Service"] = Kind({{"ports", MergedBy("port")}}, StatusConditions());
  out["/Node"] = Kind({}, {{"conditions", MergedBy("type")}, {"addresses", MergedBy("type")}});
  out["/Namespace"] = Kind({}, StatusConditions());
  out["/PersistentVolumeClaim"] = Kind({}, StatusConditions());
  out["/ServiceAccount"] = Kind({});
  out["/ServiceAccount"].fields["secrets"] = MergedBy("name");
  for (const char* kind : {"ConfigMap", "Secret", "Event", "ResourceQuota"}) {
    out[std::string("/") + kind] = Kind({});
  }
  out["batch/Job"] = Kind({{"template", PodTemplateSpec()}}, StatusConditions());
  out["apps/Deployment"] = Kind({{"template", PodTemplateSpec()}}, StatusConditions());
  out["apiextensions.k8s.io/CustomResourceDefinition"] = Kind({});
  out["coordination.k8s.io/Lease"] = Kind({});
  out["scheduling.k8s.io/PriorityClass"] = Kind({});
  for (const char* kind : {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}) {
    out[std::string("rbac.authorization.k8s.io/") + kind] = Kind({});
  }
  for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
    PatchSchema hooks = Kind({});
    hooks.fields["webhooks"] = MergedBy("name");
    out[std::string("admissionregistration.k8s.io/") + kind] = std::move(hooks);
  }
  return out;
}

}  // namespace

const PatchSchema* PatchSchemaOf(std::string_view group, std::string_view kind) {
  static const auto* schemas = new std::map<std::string, PatchSchema, std::less<>>(MakeSchemas());
  auto it = schemas->find(std::string(group) + "/" + std::string(kind));
  return it == schemas->end() ? nullptr : &it->second;
}

}  // namespace trainyard::server
