// The subset of Kubernetes core/v1 a training replica needs: containers,
// volumes, placement. Each struct keeps the fields it does not model in
// `extra`, verbatim, so no field of a user's pod template is ever lost.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "api/meta.h"
#include "api/reflect.h"
#include "common/quantity.h"

namespace trainyard::api {

using ResourceList = std::map<std::string, Quantity>;

struct ObjectFieldSelector {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ObjectFieldSelector";
  std::string api_version;
  std::string field_path;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("apiVersion", s.api_version);
    v("fieldPath", s.field_path);
  }
  bool operator==(const ObjectFieldSelector&) const = default;
};

struct ResourceFieldSelector {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ResourceFieldSelector";
  std::string container_name;
  std::string resource;
  std::optional<Quantity> divisor;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("containerName", s.container_name);
    v("resource", s.resource);
    v("divisor", s.divisor);
  }
  bool operator==(const ResourceFieldSelector&) const = default;
};

// configMapKeyRef and secretKeyRef share this shape.
struct KeySelector {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "KeySelector";
  std::string name;
  std::string key;
  std::optional<bool> optional;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("key", s.key);
    v("optional", s.optional);
  }
  bool operator==(const KeySelector&) const = default;
};

struct EnvVarSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "EnvVarSource";
  std::optional<ObjectFieldSelector> field_ref;
  std::optional<ResourceFieldSelector> resource_field_ref;
  std::optional<KeySelector> config_map_key_ref;
  std::optional<KeySelector> secret_key_ref;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("fieldRef", s.field_ref);
    v("resourceFieldRef", s.resource_field_ref);
    v("configMapKeyRef", s.config_map_key_ref);
    v("secretKeyRef", s.secret_key_ref);
  }
  bool operator==(const EnvVarSource&) const = default;
};

struct EnvVar {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "EnvVar";
  std::string name;
  std::optional<std::string> value;
  std::optional<EnvVarSource> value_from;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("value", s.value);
    v("valueFrom", s.value_from);
  }
  bool operator==(const EnvVar&) const = default;
};

// A ConfigMap or Secret whose every key becomes a variable (envFrom).
struct EnvFromReference {
  static constexpr bool kReflected = true;
  // SecretEnvSource has the same fields.
  static constexpr std::string_view kKubernetesType = "ConfigMapEnvSource";
  std::string name;
  std::optional<bool> optional;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("optional", s.optional);
  }
  bool operator==(const EnvFromReference&) const = default;
};

struct EnvFromSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "EnvFromSource";
  std::string prefix;  // put before each key
  std::optional<EnvFromReference> config_map_ref;
  std::optional<EnvFromReference> secret_ref;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("prefix", s.prefix);
    v("configMapRef", s.config_map_ref);
    v("secretRef", s.secret_ref);
  }
  bool operator==(const EnvFromSource&) const = default;
};

struct ContainerPort {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ContainerPort";
  std::string name;
  std::optional<int32_t> container_port;
  std::optional<int32_t> host_port;
  std::string protocol;
  std::string host_ip;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("containerPort", s.container_port);
    v("hostPort", s.host_port);
    v("protocol", s.protocol);
    v("hostIP", s.host_ip);
  }
  bool operator==(const ContainerPort&) const = default;
};

struct ResourceRequirements {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ResourceRequirements";
  ResourceList limits;
  ResourceList requests;
  Json extra;  // claims
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("limits", s.limits);
    v("requests", s.requests);
  }
  bool operator==(const ResourceRequirements&) const = default;
};

struct VolumeMount {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "VolumeMount";
  std::string name;
  std::string mount_path;
  std::string sub_path;
  std::optional<bool> read_only;
  Json extra;  // mountPropagation, subPathExpr, recursiveReadOnly
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("mountPath", s.mount_path);
    v("subPath", s.sub_path);
    v("readOnly", s.read_only);
  }
  bool operator==(const VolumeMount&) const = default;
};

struct Container {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "Container";
  std::string name;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::string working_dir;
  std::vector<EnvFromSource> env_from;  // applied before env, which wins
  std::vector<EnvVar> env;
  std::vector<ContainerPort> ports;
  ResourceRequirements resources;
  std::vector<VolumeMount> volume_mounts;
  // Of an init container only: "Always" makes it a sidecar, started in
  // order and kept running beside the containers.
  std::string restart_policy;
  Json extra;  // imagePullPolicy, probes, securityContext, ...
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("image", s.image);
    v("command", s.command);
    v("args", s.args);
    v("workingDir", s.working_dir);
    v("envFrom", s.env_from);
    v("env", s.env);
    v("ports", s.ports);
    v("resources", s.resources);
    v("volumeMounts", s.volume_mounts);
    v("restartPolicy", s.restart_policy);
  }
  bool operator==(const Container&) const = default;
};

struct HostPathVolumeSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "HostPathVolumeSource";
  std::string path;
  std::string type;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("path", s.path);
    v("type", s.type);
  }
  bool operator==(const HostPathVolumeSource&) const = default;
};

struct EmptyDirVolumeSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "EmptyDirVolumeSource";
  std::string medium;
  std::optional<Quantity> size_limit;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("medium", s.medium);
    v("sizeLimit", s.size_limit);
  }
  bool operator==(const EmptyDirVolumeSource&) const = default;
};

struct KeyToPath {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "KeyToPath";
  std::string key;
  std::string path;
  std::optional<int32_t> mode;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("key", s.key);
    v("path", s.path);
    v("mode", s.mode);
  }
  bool operator==(const KeyToPath&) const = default;
};

struct ConfigMapVolumeSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ConfigMapVolumeSource";
  std::string name;
  std::vector<KeyToPath> items;
  std::optional<int32_t> default_mode;
  std::optional<bool> optional;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("items", s.items);
    v("defaultMode", s.default_mode);
    v("optional", s.optional);
  }
  bool operator==(const ConfigMapVolumeSource&) const = default;
};

struct SecretVolumeSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "SecretVolumeSource";
  std::string secret_name;
  std::vector<KeyToPath> items;
  std::optional<int32_t> default_mode;
  std::optional<bool> optional;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("secretName", s.secret_name);
    v("items", s.items);
    v("defaultMode", s.default_mode);
    v("optional", s.optional);
  }
  bool operator==(const SecretVolumeSource&) const = default;
};

struct PersistentVolumeClaimVolumeSource {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "PersistentVolumeClaimVolumeSource";
  std::string claim_name;
  std::optional<bool> read_only;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("claimName", s.claim_name);
    v("readOnly", s.read_only);
  }
  bool operator==(const PersistentVolumeClaimVolumeSource&) const = default;
};

struct Volume {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "Volume";
  std::string name;
  std::optional<HostPathVolumeSource> host_path;
  std::optional<EmptyDirVolumeSource> empty_dir;
  std::optional<ConfigMapVolumeSource> config_map;
  std::optional<SecretVolumeSource> secret;
  std::optional<PersistentVolumeClaimVolumeSource> persistent_volume_claim;
  Json extra;  // every other volume source (nfs, csi, projected, ...)
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("hostPath", s.host_path);
    v("emptyDir", s.empty_dir);
    v("configMap", s.config_map);
    v("secret", s.secret);
    v("persistentVolumeClaim", s.persistent_volume_claim);
  }
  bool operator==(const Volume&) const = default;
};

struct NodeSelectorRequirement {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "NodeSelectorRequirement";
  std::string key;
  std::string operator_;
  std::vector<std::string> values;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("key", s.key);
    v("operator", s.operator_);
    v("values", s.values);
  }
  bool operator==(const NodeSelectorRequirement&) const = default;
};

struct NodeSelectorTerm {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "NodeSelectorTerm";
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("matchExpressions", s.match_expressions);
    v("matchFields", s.match_fields);
  }
  bool operator==(const NodeSelectorTerm&) const = default;
};

struct NodeSelector {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "NodeSelector";
  std::vector<NodeSelectorTerm> node_selector_terms;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("nodeSelectorTerms", s.node_selector_terms);
  }
  bool operator==(const NodeSelector&) const = default;
};

struct PreferredSchedulingTerm {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "PreferredSchedulingTerm";
  std::optional<int32_t> weight;
  NodeSelectorTerm preference;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("weight", s.weight);
    v("preference", s.preference);
  }
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

struct NodeAffinity {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "NodeAffinity";
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("requiredDuringSchedulingIgnoredDuringExecution", s.required);
    v("preferredDuringSchedulingIgnoredDuringExecution", s.preferred);
  }
  bool operator==(const NodeAffinity&) const = default;
};

struct Affinity {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "Affinity";
  std::optional<NodeAffinity> node_affinity;
  Json extra;  // podAffinity, podAntiAffinity
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("nodeAffinity", s.node_affinity);
  }
  bool operator==(const Affinity&) const = default;
};

struct Toleration {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "Toleration";
  std::string key;
  std::string operator_;
  std::string value;
  std::string effect;
  std::optional<int64_t> toleration_seconds;
  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("key", s.key);
    v("operator", s.operator_);
    v("value", s.value);
    v("effect", s.effect);
    v("tolerationSeconds", s.toleration_seconds);
  }
  bool operator==(const Toleration&) const = default;
};

struct PodSpec {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "PodSpec";
  std::vector<Container> init_containers;
  std::vector<Container> containers;
  std::vector<Volume> volumes;
  std::string restart_policy;
  std::optional<int64_t> termination_grace_period_seconds;
  std::map<std::string, std::string> node_selector;
  std::optional<Affinity> affinity;
  std::vector<Toleration> tolerations;
  std::string scheduler_name;
  std::string priority_class_name;
  std::string node_name;  // set when the pod is bound to a node
  Json extra;             // serviceAccountName, securityContext, hostNetwork, ...
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("initContainers", s.init_containers);
    v("containers", s.containers);
    v("volumes", s.volumes);
    v("restartPolicy", s.restart_policy);
    v("terminationGracePeriodSeconds", s.termination_grace_period_seconds);
    v("nodeSelector", s.node_selector);
    v("affinity", s.affinity);
    v("tolerations", s.tolerations);
    v("schedulerName", s.scheduler_name);
    v("priorityClassName", s.priority_class_name);
    v("nodeName", s.node_name);
  }
  bool operator==(const PodSpec&) const = default;
};

struct PodTemplateSpec {
  static constexpr bool kReflected = true;
  ObjectMeta metadata;
  PodSpec spec;
  // Not part of the Kubernetes schema (an API server prunes it); kept so
  // nothing is lost, and reported as a warning by validation.
  Json extra;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("metadata", s.metadata);
    v("spec", s.spec);
  }
  bool operator==(const PodTemplateSpec&) const = default;
};

}  // namespace trainyard::api
