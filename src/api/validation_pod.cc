// Validation of pod templates: containers, env, ports, resources, volumes
// and placement, following Kubernetes' core/v1 rules.
#include <arpa/inet.h>
#include <fmt/format.h>

#include <charconv>
#include <set>

#include "api/names.h"
#include "api/validation_internal.h"
#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::api::internal {
namespace {

// Resources Kubernetes lets a pod overcommit; for every other one (hugepages,
// GPUs and other extended resources) a request needs a limit equal to it.
bool IsOvercommittable(const std::string& name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage";
}

bool IsStandardResource(const std::string& name) {
  return IsOvercommittable(name) || name.starts_with("hugepages-") || name == "storage" ||
         name == "pods";
}

void ValidateResourceName(const std::string& name, const FieldPath& path, ValidationResult& out) {
  if (IsStandardResource(name)) return;
  if (name.find('/') == std::string::npos) {
    out.errors.push_back(FieldError::Invalid(
        path, name,
        "must be a standard resource (cpu, memory, ephemeral-storage, hugepages-<size>) or a "
        "domain-qualified extended resource such as nvidia.com/gpu"));
    return;
  }
  for (const std::string& p : QualifiedNameProblems(name)) {
    out.errors.push_back(FieldError::Invalid(path, name, p));
  }
}

void ValidateResources(const ResourceRequirements& res, const FieldPath& path,
                       ValidationResult& out) {
  ValidateResourceList(res.limits, path.Child("limits"), out);
  ValidateResourceList(res.requests, path.Child("requests"), out);
  for (const auto& [name, request] : res.requests) {
    auto limit = res.limits.find(name);
    FieldPath request_path = path.Child("requests").Key(name);
    if (IsOvercommittable(name)) {
      if (limit != res.limits.end() && request > limit->second) {
        out.errors.push_back(
            FieldError::Invalid(request_path, request.text(),
                                fmt::format("must be less than or equal to {} limit of {}", name,
                                            limit->second.text())));
      }
    } else if (limit == res.limits.end()) {
      out.errors.push_back(FieldError::Required(
          path.Child("limits"), "Limit must be set for non overcommitable resources"));
    } else if (request != limit->second) {
      out.errors.push_back(FieldError::Invalid(
          request_path, request.text(),
          fmt::format("must be equal to {} limit of {}", name, limit->second.text())));
    }
  }
}

// A list item's name: present, well-formed by `rule`, and unique in `seen`.
void CheckItemName(const std::string& name, const FieldPath& path,
                   NameProblems (*rule)(std::string_view), std::set<std::string>& seen,
                   ValidationResult& out) {
  if (name.empty()) {
    out.errors.push_back(FieldError::Required(path));
    return;
  }
  for (const std::string& p : rule(name)) out.errors.push_back(FieldError::Invalid(path, name, p));
  if (!seen.insert(name).second) out.errors.push_back(FieldError::Duplicate(path, name));
}

// What a volumeMount asks of a container runtime that a replica's sandbox
// does not do (node/sandbox.h): said, not dropped. subPathExpr most of all,
// since without it the whole volume is mounted.
void WarnUnheededMountFields(const Json& extra, const FieldPath& path, ValidationResult& out) {
  if (!extra.is_object()) return;
  if (extra.contains("subPathExpr")) {
    out.warnings.push_back(fmt::format(
        "{}: not acted on: the whole volume is mounted; use subPath with the path spelled out",
        path.Child("subPathExpr").ToString()));
  }
  const Json* propagation =
      extra.contains("mountPropagation") ? &extra["mountPropagation"] : nullptr;
  if (propagation != nullptr && *propagation != "None") {
    out.warnings.push_back(
        fmt::format("{}: not acted on: mounts made after the replica starts are not propagated",
                    path.Child("mountPropagation").ToString()));
  }
  if (extra.contains("recursiveReadOnly")) {
    out.warnings.push_back(fmt::format(
        "{}: not acted on: a readOnly mount is read-only, mounts beneath it are not made so",
        path.Child("recursiveReadOnly").ToString()));
  }
}

}  // namespace

void ValidateEnv(const std::vector<EnvVar>& env, const FieldPath& path, ValidationResult& out) {
  std::set<std::string> seen;
  for (size_t i = 0; i < env.size(); ++i) {
    const EnvVar& var = env[i];
    FieldPath item = path.Index(static_cast<int64_t>(i));
    // Kubernetes lets the last duplicate win silently; a duplicate is almost
    // always a mistake, so it is an error here.
    CheckItemName(var.name, item.Child("name"), EnvVarNameProblems, seen, out);
    if (!var.value_from) continue;
    FieldPath from = item.Child("valueFrom");
    if (var.value && !var.value->empty()) {
      out.errors.push_back(
          FieldError::Invalid(from, "", "may not be specified when `value` is not empty"));
    }
    const EnvVarSource& src = *var.value_from;
    int sources = (src.field_ref ? 1 : 0) + (src.resource_field_ref ? 1 : 0) +
                  (src.config_map_key_ref ? 1 : 0) + (src.secret_key_ref ? 1 : 0) +
                  (src.extra.is_object() ? static_cast<int>(src.extra.size()) : 0);
    if (sources != 1) {
      out.errors.push_back(FieldError::Invalid(
          from, "",
          "must specify exactly one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or "
          "`secretKeyRef`"));
    }
    if (src.field_ref && src.field_ref->field_path.empty()) {
      out.errors.push_back(FieldError::Required(from.Child("fieldRef").Child("fieldPath")));
    }
    if (src.resource_field_ref && src.resource_field_ref->resource.empty()) {
      out.errors.push_back(FieldError::Required(from.Child("resourceFieldRef").Child("resource")));
    }
    for (const auto& [ref, name] : {std::pair{&src.config_map_key_ref, "configMapKeyRef"},
                                    std::pair{&src.secret_key_ref, "secretKeyRef"}}) {
      if (!*ref) continue;
      if ((*ref)->key.empty())
        out.errors.push_back(FieldError::Required(from.Child(name).Child("key")));
      if ((*ref)->name.empty()) {
        out.errors.push_back(FieldError::Required(from.Child(name).Child("name")));
      }
    }
  }
}

namespace {

// As kube-apiserver: one source each, named; a prefix must itself be a
// valid start of a variable name.
void ValidateEnvFrom(const std::vector<EnvFromSource>& env_from, const FieldPath& path,
                     ValidationResult& out) {
  for (size_t i = 0; i < env_from.size(); ++i) {
    const EnvFromSource& from = env_from[i];
    FieldPath item = path.Index(static_cast<int64_t>(i));
    int sources = (from.config_map_ref ? 1 : 0) + (from.secret_ref ? 1 : 0) +
                  (from.extra.is_object() ? static_cast<int>(from.extra.size()) : 0);
    if (sources != 1) {
      out.errors.push_back(FieldError::Invalid(
          item, "", "must specify exactly one of: `configMapRef` or `secretRef`"));
    }
    if (!from.prefix.empty()) {
      for (const std::string& p : EnvVarNameProblems(from.prefix)) {
        out.errors.push_back(FieldError::Invalid(item.Child("prefix"), from.prefix, p));
      }
    }
    for (const auto& [ref, name] : {std::pair{&from.config_map_ref, "configMapRef"},
                                    std::pair{&from.secret_ref, "secretRef"}}) {
      if (*ref && (*ref)->name.empty()) {
        out.errors.push_back(FieldError::Required(item.Child(name).Child("name")));
      }
    }
  }
}

void ValidatePorts(const std::vector<ContainerPort>& ports, const FieldPath& path,
                   ValidationResult& out) {
  std::set<std::string> names;
  for (size_t i = 0; i < ports.size(); ++i) {
    const ContainerPort& port = ports[i];
    FieldPath item = path.Index(static_cast<int64_t>(i));
    if (!port.name.empty()) {
      for (const std::string& p : PortNameProblems(port.name)) {
        out.errors.push_back(FieldError::Invalid(item.Child("name"), port.name, p));
      }
      if (!names.insert(port.name).second) {
        out.errors.push_back(FieldError::Duplicate(item.Child("name"), port.name));
      }
    }
    if (!port.container_port) {
      out.errors.push_back(FieldError::Required(item.Child("containerPort")));
    } else if (*port.container_port < 1 || *port.container_port > 65535) {
      out.errors.push_back(FieldError::Invalid(item.Child("containerPort"), *port.container_port,
                                               "must be between 1 and 65535, inclusive"));
    }
    if (port.host_port && (*port.host_port < 0 || *port.host_port > 65535)) {
      out.errors.push_back(FieldError::Invalid(item.Child("hostPort"), *port.host_port,
                                               "must be between 1 and 65535, inclusive"));
    }
    if (!port.protocol.empty() && port.protocol != "TCP" && port.protocol != "UDP" &&
        port.protocol != "SCTP") {
      out.errors.push_back(
          FieldError::NotSupported(item.Child("protocol"), port.protocol, {"SCTP", "TCP", "UDP"}));
    }
  }
}

void ValidateContainer(const Container& c, const FieldPath& path,
                       const std::set<std::string>& volumes, ValidationResult& out) {
  if (c.name.empty()) {
    out.errors.push_back(FieldError::Required(path.Child("name")));
  } else {
    for (const std::string& p : Dns1123LabelProblems(c.name)) {
      out.errors.push_back(FieldError::Invalid(path.Child("name"), c.name, p));
    }
  }
  if (!c.command.empty() && c.command[0].empty()) {
    out.errors.push_back(FieldError::Invalid(path.Child("command").Index(0), "",
                                             "the program to run must not be empty"));
  }
  ValidateEnvFrom(c.env_from, path.Child("envFrom"), out);
  ValidateEnv(c.env, path.Child("env"), out);
  ValidatePorts(c.ports, path.Child("ports"), out);
  ValidateResources(c.resources, path.Child("resources"), out);
  std::set<std::string> mount_paths;
  for (size_t i = 0; i < c.volume_mounts.size(); ++i) {
    const VolumeMount& m = c.volume_mounts[i];
    FieldPath item = path.Child("volumeMounts").Index(static_cast<int64_t>(i));
    if (m.name.empty()) {
      out.errors.push_back(FieldError::Required(item.Child("name")));
    } else if (!volumes.contains(m.name)) {
      out.errors.push_back(FieldError::NotFound(item.Child("name"), m.name,
                                                "no volume of this name in the pod's volumes"));
    }
    if (m.mount_path.empty()) {
      out.errors.push_back(FieldError::Required(item.Child("mountPath")));
    } else if (!mount_paths.insert(m.mount_path).second) {
      out.errors.push_back(
          FieldError::Invalid(item.Child("mountPath"), m.mount_path, "must be unique"));
    }
    for (const std::string& p : LocalDescendingPathProblems(m.sub_path)) {
      out.errors.push_back(FieldError::Invalid(item.Child("subPath"), m.sub_path, p));
    }
    WarnUnheededMountFields(m.extra, item, out);
  }
}

void ValidateFileMode(const std::optional<int32_t>& mode, const FieldPath& path,
                      ValidationResult& out) {
  if (mode && (*mode < 0 || *mode > 0777)) {
    out.errors.push_back(FieldError::Invalid(
        path, *mode, "must be a number between 0 and 0777 (octal), both inclusive"));
  }
}

// A configMap or secret volume (`name_field` names it): each key becomes a
// file, at its items[].path inside the volume when listed, which the node
// agent creates.
template <class Source>
void ValidateKeyFiles(const Source& source, const std::string& name, const char* name_field,
                      const FieldPath& path, ValidationResult& out) {
  if (name.empty()) out.errors.push_back(FieldError::Required(path.Child(name_field)));
  ValidateFileMode(source.default_mode, path.Child("defaultMode"), out);
  const std::vector<KeyToPath>& items = source.items;
  for (size_t i = 0; i < items.size(); ++i) {
    const KeyToPath& kp = items[i];
    FieldPath item = path.Child("items").Index(static_cast<int64_t>(i));
    if (kp.key.empty()) out.errors.push_back(FieldError::Required(item.Child("key")));
    if (kp.path.empty()) out.errors.push_back(FieldError::Required(item.Child("path")));
    for (const std::string& p : LocalNonReservedPathProblems(kp.path)) {
      out.errors.push_back(FieldError::Invalid(item.Child("path"), kp.path, p));
    }
    ValidateFileMode(kp.mode, item.Child("mode"), out);
  }
}

int CountVolumeSources(const Volume& v) {
  int n = (v.host_path ? 1 : 0) + (v.empty_dir ? 1 : 0) + (v.config_map ? 1 : 0) +
          (v.secret ? 1 : 0) + (v.persistent_volume_claim ? 1 : 0);
  if (v.extra.is_object()) n += static_cast<int>(v.extra.size());
  return n;
}

}  // namespace

void ValidateVolumes(const std::vector<Volume>& volumes, const FieldPath& path,
                     std::set<std::string>& names, ValidationResult& out) {
  for (size_t i = 0; i < volumes.size(); ++i) {
    const Volume& v = volumes[i];
    FieldPath item = path.Index(static_cast<int64_t>(i));
    CheckItemName(v.name, item.Child("name"), Dns1123LabelProblems, names, out);
    int sources = CountVolumeSources(v);
    if (sources == 0) {
      out.errors.push_back(FieldError::Required(item, "must specify a volume type"));
    } else if (sources > 1) {
      out.errors.push_back(FieldError::Forbidden(item, "may not specify more than 1 volume type"));
    }
    if (v.host_path && v.host_path->path.empty()) {
      out.errors.push_back(FieldError::Required(item.Child("hostPath").Child("path")));
    }
    if (v.empty_dir && !v.empty_dir->medium.empty() && v.empty_dir->medium != "Memory") {
      out.errors.push_back(FieldError::NotSupported(item.Child("emptyDir").Child("medium"),
                                                    v.empty_dir->medium, {"", "Memory"}));
    }
    if (v.config_map) {
      ValidateKeyFiles(*v.config_map, v.config_map->name, "name", item.Child("configMap"), out);
    }
    if (v.secret) {
      ValidateKeyFiles(*v.secret, v.secret->secret_name, "secretName", item.Child("secret"), out);
    }
    if (v.persistent_volume_claim && v.persistent_volume_claim->claim_name.empty()) {
      out.errors.push_back(
          FieldError::Required(item.Child("persistentVolumeClaim").Child("claimName")));
    }
  }
}

void ValidateTolerations(const std::vector<Toleration>& tolerations, const FieldPath& path,
                         ValidationResult& out) {
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Toleration& t = tolerations[i];
    FieldPath item = path.Index(static_cast<int64_t>(i));
    if (!t.key.empty()) {
      for (const std::string& p : QualifiedNameProblems(t.key)) {
        out.errors.push_back(FieldError::Invalid(item.Child("key"), t.key, p));
      }
    } else if (t.operator_ != "Exists") {
      out.errors.push_back(FieldError::Invalid(
          item.Child("operator"), t.operator_,
          "operator must be Exists when `key` is empty, which means \"match all values and all "
          "keys\""));
    }
    if (t.operator_ == "Exists" && !t.value.empty()) {
      out.errors.push_back(FieldError::Invalid(item.Child("operator"), t.value,
                                               "value must be empty when `operator` is 'Exists'"));
    }
    if (!t.operator_.empty() && t.operator_ != "Equal" && t.operator_ != "Exists") {
      out.errors.push_back(
          FieldError::NotSupported(item.Child("operator"), t.operator_, {"Equal", "Exists"}));
    }
    if (!t.effect.empty() && t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" &&
        t.effect != "NoExecute") {
      out.errors.push_back(FieldError::NotSupported(
          item.Child("effect"), t.effect, {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    }
    if (t.toleration_seconds && t.effect != "NoExecute") {
      out.errors.push_back(
          FieldError::Invalid(item.Child("effect"), t.effect,
                              "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
  }
}

namespace {

bool IsInteger(const std::string& s) {
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

void ValidateRequirement(const NodeSelectorRequirement& r, const FieldPath& path,
                         ValidationResult& out) {
  const std::string& op = r.operator_;
  if (op == "In" || op == "NotIn") {
    if (r.values.empty()) {
      out.errors.push_back(FieldError::Required(
          path.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!r.values.empty()) {
      out.errors.push_back(FieldError::Forbidden(
          path.Child("values"),
          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    }
  } else if (op == "Gt" || op == "Lt") {
    if (r.values.size() != 1) {
      out.errors.push_back(FieldError::Required(
          path.Child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    } else if (!IsInteger(r.values[0])) {
      out.errors.push_back(FieldError::Invalid(path.Child("values").Index(0), r.values[0],
                                               "must be an integer for `operator` 'Lt' or 'Gt'"));
    }
  } else {
    out.errors.push_back(FieldError::NotSupported(
        path.Child("operator"), op, {"DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"}));
  }
  for (const std::string& p : QualifiedNameProblems(r.key)) {
    out.errors.push_back(FieldError::Invalid(path.Child("key"), r.key, p));
  }
}

void ValidateNodeSelectorTerm(const NodeSelectorTerm& term, const FieldPath& path,
                              ValidationResult& out) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    ValidateRequirement(term.match_expressions[i],
                        path.Child("matchExpressions").Index(static_cast<int64_t>(i)), out);
  }
  // Kubernetes allows only metadata.name with In or NotIn here.
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const NodeSelectorRequirement& r = term.match_fields[i];
    FieldPath item = path.Child("matchFields").Index(static_cast<int64_t>(i));
    if (r.key != "metadata.name") {
      out.errors.push_back(FieldError::NotSupported(item.Child("key"), r.key, {"metadata.name"}));
    }
    if (r.operator_ != "In" && r.operator_ != "NotIn") {
      out.errors.push_back(
          FieldError::NotSupported(item.Child("operator"), r.operator_, {"In", "NotIn"}));
    } else if (r.values.size() != 1) {
      out.errors.push_back(FieldError::Required(item.Child("values"),
                                                "must be only one value when `operator` is "
                                                "'In' or 'NotIn' for node field selector"));
    }
  }
}

void ValidateAffinity(const Affinity& affinity, const FieldPath& path, ValidationResult& out) {
  if (!affinity.node_affinity) return;
  FieldPath node = path.Child("nodeAffinity");
  if (const auto& required = affinity.node_affinity->required) {
    FieldPath terms =
        node.Child("requiredDuringSchedulingIgnoredDuringExecution").Child("nodeSelectorTerms");
    if (required->node_selector_terms.empty()) {
      out.errors.push_back(
          FieldError::Required(terms, "must have at least one node selector term"));
    }
    for (size_t i = 0; i < required->node_selector_terms.size(); ++i) {
      ValidateNodeSelectorTerm(required->node_selector_terms[i],
                               terms.Index(static_cast<int64_t>(i)), out);
    }
  }
  const auto& preferred = affinity.node_affinity->preferred;
  for (size_t i = 0; i < preferred.size(); ++i) {
    FieldPath item = node.Child("preferredDuringSchedulingIgnoredDuringExecution")
                         .Index(static_cast<int64_t>(i));
    int32_t weight = preferred[i].weight.value_or(0);
    if (weight < 1 || weight > 100) {
      out.errors.push_back(
          FieldError::Invalid(item.Child("weight"), weight, "must be in the range 1-100"));
    }
    ValidateNodeSelectorTerm(preferred[i].preference, item.Child("preference"), out);
  }
}

// Whom a replica runs as is trainyard's run-as rules' to pick (its own
// user, or the one --run-as names), so that one namespace's replicas cannot
// reach another's files; only in an image's root, where they leave it to
// the pod (--run-as root), are the user fields acted on
// (node/image_run_as.h). What a securityContext asks for is said.
void WarnUnheededUser(const Json& extra, const FieldPath& path, ValidationResult& out) {
  if (!extra.is_object() || !extra.contains("securityContext")) return;
  const Json& context = extra["securityContext"];
  if (!context.is_object()) return;
  for (const char* field : {"runAsUser", "runAsGroup", "runAsNonRoot", "supplementalGroups"}) {
    if (!context.contains(field)) continue;
    out.warnings.push_back(fmt::format(
        "{}: acted on only in the container's image with --run-as root; otherwise replicas run "
        "as trainyard's user, or the one its --run-as names",
        path.Child("securityContext").Child(field).ToString()));
  }
  for (const char* field : {"fsGroup"}) {
    if (!context.contains(field)) continue;
    out.warnings.push_back(fmt::format(
        "{}: not acted on: replicas run as trainyard's user, or the one its --run-as names",
        path.Child("securityContext").Child(field).ToString()));
  }
}

// Probes and lifecycle hooks are the kubelet's to run; here a container
// is ready once started, and stops on its signal alone: said, not dropped.
void WarnUnrunHooks(const Json& extra, const FieldPath& path, ValidationResult& out) {
  if (!extra.is_object()) return;
  for (const char* field : {"livenessProbe", "readinessProbe", "startupProbe", "lifecycle"}) {
    if (!extra.contains(field)) continue;
    out.warnings.push_back(fmt::format(
        "{}: not acted on: trainyard runs no probes or lifecycle hooks; a container is ready "
        "once started and is never restarted for a probe",
        path.Child(field).ToString()));
  }
}

// A container's termination file is not read: a failed one's message is
// the end of its output, as FallbackToLogsOnError keeps it. Said where a
// manifest names a file of its own, which its code would write to report.
void WarnUnreadTerminationFile(const Json& extra, const FieldPath& path, ValidationResult& out) {
  if (!extra.is_object()) return;
  std::string file = StringAt(extra, "terminationMessagePath");
  if (file.empty() || file == "/dev/termination-log") return;
  out.warnings.push_back(fmt::format(
      "{}: not acted on: trainyard reads no termination file; a failed container's message is "
      "the end of its output, as terminationMessagePolicy FallbackToLogsOnError makes it",
      path.Child("terminationMessagePath").ToString()));
}

}  // namespace

void ValidateResourceList(const ResourceList& list, const FieldPath& path, ValidationResult& out) {
  for (const auto& [name, quantity] : list) {
    FieldPath item = path.Key(name);
    ValidateResourceName(name, item, out);
    if (quantity.milli() < 0) {
      out.errors.push_back(
          FieldError::Invalid(item, quantity.text(), "must be greater than or equal to 0"));
    } else if (!IsStandardResource(name) && !quantity.IsInteger()) {
      out.errors.push_back(FieldError::Invalid(item, quantity.text(), "must be an integer"));
    }
  }
}

bool IsIpAddress(const std::string& text) {
  unsigned char addr[16];
  return inet_pton(AF_INET, text.c_str(), addr) == 1 ||
         inet_pton(AF_INET6, text.c_str(), addr) == 1;
}

// hostAliases as kube-apiserver checks them: each an IP address and host
// names that are DNS-1123 subdomains. They become lines of the pod's
// /etc/hosts, which nothing else may be smuggled into.
void ValidateHostAliases(const Json& spec_extra, const FieldPath& path, ValidationResult& out) {
  const Json* aliases = FindAt(spec_extra, {"hostAliases"});
  if (aliases == nullptr || aliases->is_null()) return;
  FieldPath at = path.Child("hostAliases");
  if (!aliases->is_array()) {
    out.errors.push_back(FieldError::Invalid(at, aliases->dump(), "must be a list"));
    return;
  }
  for (size_t i = 0; i < aliases->size(); ++i) {
    const Json& alias = (*aliases)[i];
    FieldPath item = at.Index(static_cast<int64_t>(i));
    std::string ip = StringAt(alias, "ip");
    if (!IsIpAddress(ip)) {
      out.errors.push_back(FieldError::Invalid(
          item.Child("ip"), ip, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"));
    }
    const Json* names = FindAt(alias, {"hostnames"});
    if (names == nullptr || names->is_null()) continue;
    if (!names->is_array()) {
      out.errors.push_back(
          FieldError::Invalid(item.Child("hostnames"), names->dump(), "must be a list"));
      continue;
    }
    for (size_t j = 0; j < names->size(); ++j) {
      FieldPath name_path = item.Child("hostnames").Index(static_cast<int64_t>(j));
      std::string name =
          (*names)[j].is_string() ? (*names)[j].get<std::string>() : (*names)[j].dump();
      for (const std::string& p : Dns1123SubdomainProblems(name)) {
        out.errors.push_back(FieldError::Invalid(name_path, name, p));
      }
    }
  }
}

// trainyard.dev/root, the user's choice of files for a pod's replicas:
// either root trainyard knows, never a misspelling run as the default.
void ValidateRootAnnotation(const std::map<std::string, std::string>& annotations,
                            const FieldPath& path, ValidationResult& out) {
  auto it = annotations.find(std::string(kRootAnnotation));
  if (it == annotations.end() || it->second == kHostRoot || it->second == kImageRoot) return;
  out.errors.push_back(FieldError::NotSupported(path.Key(kRootAnnotation), it->second,
                                                {std::string(kHostRoot), std::string(kImageRoot)}));
}

void ValidatePodTemplate(const PodTemplateSpec& pod, const FieldPath& path,
                         const PodTemplateRules& rules, ValidationResult& out) {
  FieldPath spec_path = path.Child("spec");
  const PodSpec& spec = pod.spec;
  if (pod.extra.is_object()) {
    for (const auto& [key, value] : pod.extra.items()) {
      out.warnings.push_back(
          fmt::format("{}: unknown field, ignored (a pod template has only metadata and spec)",
                      path.Child(key).ToString()));
    }
  }
  ValidateLabels(pod.metadata.labels, path.Child("metadata").Child("labels"), out);
  ValidateRootAnnotation(pod.metadata.annotations, path.Child("metadata").Child("annotations"),
                         out);
  std::set<std::string> volume_names;
  ValidateVolumes(spec.volumes, spec_path.Child("volumes"), volume_names, out);
  std::set<std::string> container_names;
  auto check_containers = [&](const std::vector<Container>& containers, const char* field) {
    for (size_t i = 0; i < containers.size(); ++i) {
      FieldPath item = spec_path.Child(field).Index(static_cast<int64_t>(i));
      ValidateContainer(containers[i], item, volume_names, out);
      WarnUnheededUser(containers[i].extra, item, out);
      WarnUnrunHooks(containers[i].extra, item, out);
      WarnUnreadTerminationFile(containers[i].extra, item, out);
      if (!containers[i].name.empty() && !container_names.insert(containers[i].name).second) {
        out.errors.push_back(FieldError::Duplicate(item.Child("name"), containers[i].name));
      }
    }
  };
  check_containers(spec.init_containers, "initContainers");
  check_containers(spec.containers, "containers");
  // As kube-apiserver: only an init container may set its own restart
  // policy, and only to Always (a sidecar).
  for (size_t i = 0; i < spec.init_containers.size(); ++i) {
    const std::string& policy = spec.init_containers[i].restart_policy;
    if (!policy.empty() && policy != "Always") {
      out.errors.push_back(FieldError::NotSupported(
          spec_path.Child("initContainers").Index(static_cast<int64_t>(i)).Child("restartPolicy"),
          policy, {"Always"}));
    }
  }
  for (size_t i = 0; i < spec.containers.size(); ++i) {
    if (spec.containers[i].restart_policy.empty()) continue;
    out.errors.push_back(FieldError::Forbidden(
        spec_path.Child("containers").Index(static_cast<int64_t>(i)).Child("restartPolicy"),
        "may not be set for non-init containers"));
  }
  WarnUnheededUser(spec.extra, spec_path, out);
  ValidateHostAliases(spec.extra, spec_path, out);
  if (spec.restart_policy.empty()) {
    if (rules.restart_policy_required) {
      out.errors.push_back(FieldError::Required(
          spec_path.Child("restartPolicy"),
          "valid values: " + Join(
                                 [&] {
                                   std::vector<std::string> quoted;
                                   for (const std::string& p : rules.restart_policies)
                                     quoted.push_back(Quote(p));
                                   return quoted;
                                 }(),
                                 ", ")));
    }
  } else {
    std::vector<std::string> allowed = rules.restart_policies;
    if (allowed.empty()) allowed = {"Always", "OnFailure", "Never"};
    if (std::find(allowed.begin(), allowed.end(), spec.restart_policy) == allowed.end()) {
      out.errors.push_back(
          FieldError::NotSupported(spec_path.Child("restartPolicy"), spec.restart_policy, allowed));
    }
  }
  CheckMin(spec.termination_grace_period_seconds, 0,
           spec_path.Child("terminationGracePeriodSeconds"), out);
  ValidateLabels(spec.node_selector, spec_path.Child("nodeSelector"), out);
  if (spec.affinity) ValidateAffinity(*spec.affinity, spec_path.Child("affinity"), out);
  ValidateTolerations(spec.tolerations, spec_path.Child("tolerations"), out);
  for (const auto& [field, value] : {std::pair{"schedulerName", &spec.scheduler_name},
                                     std::pair{"priorityClassName", &spec.priority_class_name}}) {
    if (value->empty()) continue;
    for (const std::string& p : Dns1123SubdomainProblems(*value)) {
      out.errors.push_back(FieldError::Invalid(spec_path.Child(field), *value, p));
    }
  }
}

}  // namespace trainyard::api::internal
