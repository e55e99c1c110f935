#include "node/container_env.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <unordered_map>

#include "api/json.h"
#include "api/names.h"
#include "node/object_keys.h"
#include "runtime/local/expand.h"

namespace trainyard::node {
namespace {

// metadata.labels['app'] -> ("labels", "app")
std::optional<std::pair<std::string, std::string>> MapRef(const std::string& path) {
  for (const char* field : {"metadata.labels", "metadata.annotations"}) {
    std::string prefix = std::string(field) + "['";
    if (path.starts_with(prefix) && path.ends_with("']")) {
      return std::pair{std::string(field + 9),
                       path.substr(prefix.size(), path.size() - prefix.size() - 2)};
    }
  }
  return std::nullopt;
}

Result<std::string> FieldRef(const api::Pod& pod, const std::string& path) {
  if (path == "metadata.name") return pod.metadata.name;
  if (path == "metadata.namespace") return pod.metadata.namespace_;
  if (path == "metadata.uid") return pod.metadata.uid;
  if (path == "spec.nodeName") return pod.spec.node_name;
  if (path == "spec.serviceAccountName")
    return api::StringAt(pod.spec.extra, "serviceAccountName", "default");
  if (path == "status.hostIP" || path == "status.podIP" || path == "status.podIPs" ||
      path == "status.hostIPs") {
    return std::string("127.0.0.1");
  }
  if (auto ref = MapRef(path)) {
    const auto& map = ref->first == "labels" ? pod.metadata.labels : pod.metadata.annotations;
    auto it = map.find(ref->second);
    return it == map.end() ? std::string() : it->second;
  }
  return InvalidArgumentError(fmt::format("fieldRef {} is not supported", path));
}

Result<std::string> ResourceRef(const api::Pod& pod, const api::Container& self,
                                const api::ResourceFieldSelector& ref, const NodeFacts& node) {
  const api::Container* c = &self;
  if (!ref.container_name.empty()) {
    c = nullptr;
    for (const api::Container& other : pod.spec.containers) {
      if (other.name == ref.container_name) c = &other;
    }
    // The spec's mistake, not something to wait for.
    if (c == nullptr)
      return InvalidArgumentError(fmt::format("container {} not found", ref.container_name));
  }
  std::string section = ref.resource.substr(0, ref.resource.find('.'));
  std::string name = ref.resource.substr(ref.resource.find('.') + 1);
  const api::ResourceList& list =
      section == "requests" ? c->resources.requests : c->resources.limits;
  int64_t milli = 0;
  if (auto it = list.find(name); it != list.end()) {
    milli = it->second.milli();
  } else if (name == "cpu") {
    milli = node.cpus * 1000;  // no limit: the node's capacity, as the kubelet reports it
  } else if (name == "memory") {
    milli = node.memory_bytes * 1000;
  }
  int64_t divisor = ref.divisor ? ref.divisor->milli() : 1000;
  if (divisor <= 0) return InvalidArgumentError("resourceFieldRef divisor must be positive");
  return std::to_string((milli + divisor - 1) / divisor);  // rounded up, as Kubernetes does
}

Result<std::optional<std::string>> KeyRef(const api::Pod& pod, const api::KeySelector& ref,
                                          const std::string& kind,
                                          const store::ObjectStore& store) {
  ASSIGN_OR_RETURN(std::optional<ObjectKeys> keys,
                   ReadObjectKeys(store, kind, pod.metadata.namespace_, ref.name,
                                  /*binary_data=*/false));
  if (keys) {
    if (auto it = keys->find(ref.key); it != keys->end()) return std::optional(it->second);
  }
  if (ref.optional.value_or(false)) return std::optional<std::string>();
  if (!keys) return NotFoundError(fmt::format("{} {} not found", kind, ref.name));
  return NotFoundError(fmt::format("{} {} has no key {}", kind, ref.name, ref.key));
}

// The values of an envFrom source's object, by key; none when it is
// missing and optional.
Result<ObjectKeys> EnvFromValues(const api::Pod& pod, const api::EnvFromSource& from,
                                 const store::ObjectStore& store) {
  bool secret = from.secret_ref.has_value();
  const api::EnvFromReference& ref = secret ? *from.secret_ref : *from.config_map_ref;
  std::string kind = secret ? "Secret" : "ConfigMap";
  ASSIGN_OR_RETURN(std::optional<ObjectKeys> keys,
                   ReadObjectKeys(store, kind, pod.metadata.namespace_, ref.name,
                                  /*binary_data=*/false));
  if (keys) return std::move(*keys);
  if (ref.optional.value_or(false)) return ObjectKeys();
  return NotFoundError(
      fmt::format("envFrom: {} {} not found; create it or set optional: true", kind, ref.name));
}

// What a variable or an argument adds to execve's strings ("NAME=value"
// and its NUL; an argument and its NUL).
size_t EnvBytes(const EnvList& env) {
  size_t bytes = 0;
  for (const auto& [name, value] : env) bytes += name.size() + value.size() + 2;
  return bytes;
}

Status TooLong(const std::string& what) {
  return InvalidArgumentError(fmt::format(
      "{}: the expanded value is longer than {} KiB, the most Linux passes to a program in one "
      "string; check its $(VAR) references",
      what, runtime::kMaxExpandedBytes / 1024));
}

Status TooMuch(size_t bytes) {
  return InvalidArgumentError(fmt::format(
      "the environment and arguments take {} bytes after $(VAR) expansion, over the {} MiB a "
      "program may be given; check the $(VAR) references",
      bytes, runtime::kMaxEnvAndArgvBytes / (1024 * 1024)));
}

}  // namespace

std::string PodHostname(const api::Pod& pod) {
  // spec.hostname is validated as a DNS label; a pod name may be longer
  // than a host name can be (63), and is cut as the kubelet cuts it.
  std::string name = api::StringAt(pod.spec.extra, "hostname", pod.metadata.name);
  if (name.size() <= kMaxHostnameLength) return name;
  name.resize(kMaxHostnameLength);
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return name;
}

Result<EnvList> ContainerEnv(const api::Pod& pod, const api::Container& container,
                             const EnvList& base, const NodeFacts& node,
                             const store::ObjectStore& store, std::vector<std::string>* skipped) {
  EnvList env = base;
  env.emplace_back("HOSTNAME", PodHostname(pod));
  // Where each name is in `env`: an envFrom source may bring a hundred
  // thousand keys.
  std::unordered_map<std::string, size_t> at;
  for (size_t i = 0; i < env.size(); ++i) at[env[i].first] = i;
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    auto it = at.find(std::string(name));
    if (it == at.end()) return std::nullopt;
    return env[it->second].second;
  };
  // A later definition of a name replaces the earlier one, in place.
  auto set = [&](const std::string& name, std::string value) {
    auto [it, added] = at.try_emplace(name, env.size());
    if (added) {
      env.emplace_back(name, std::move(value));
    } else {
      env[it->second].second = std::move(value);
    }
  };
  for (const api::EnvFromSource& from : container.env_from) {
    if (!from.config_map_ref && !from.secret_ref) {
      return InvalidArgumentError("envFrom: names neither a ConfigMap nor a Secret");
    }
    ASSIGN_OR_RETURN(auto values, EnvFromValues(pod, from, store));
    std::vector<std::string> invalid;
    for (auto& [key, value] : values) {
      std::string name = from.prefix + key;
      if (!api::EnvVarNameProblems(name).empty()) {
        invalid.push_back(name);
        continue;
      }
      set(name, std::move(value));
    }
    if (size_t bytes = EnvBytes(env); bytes > runtime::kMaxEnvAndArgvBytes) return TooMuch(bytes);
    if (!invalid.empty() && skipped != nullptr) {
      skipped->push_back(fmt::format(
          "keys [{}] of {} {}", fmt::join(invalid, " "), from.secret_ref ? "Secret" : "ConfigMap",
          from.secret_ref ? from.secret_ref->name : from.config_map_ref->name));
    }
  }
  for (const api::EnvVar& var : container.env) {
    if (!var.value_from) {
      // Literal values expand against what is defined before them.
      std::optional<std::string> value = runtime::ExpandReferences(var.value.value_or(""), lookup);
      if (!value) return TooLong("env " + var.name);
      set(var.name, std::move(*value));
      // Bounded as it grows: many variables each near the bound must not
      // add up to gigabytes either.
      if (size_t bytes = EnvBytes(env); bytes > runtime::kMaxEnvAndArgvBytes) return TooMuch(bytes);
      continue;
    }
    const api::EnvVarSource& from = *var.value_from;
    std::optional<std::string> value;
    if (from.field_ref) {
      ASSIGN_OR_RETURN(value, FieldRef(pod, from.field_ref->field_path));
    } else if (from.resource_field_ref) {
      ASSIGN_OR_RETURN(value, ResourceRef(pod, container, *from.resource_field_ref, node));
    } else if (from.config_map_key_ref) {
      ASSIGN_OR_RETURN(value, KeyRef(pod, *from.config_map_key_ref, "ConfigMap", store));
    } else if (from.secret_key_ref) {
      ASSIGN_OR_RETURN(value, KeyRef(pod, *from.secret_key_ref, "Secret", store));
    } else {
      return InvalidArgumentError(fmt::format("env {}: this valueFrom is not supported", var.name));
    }
    if (value) set(var.name, std::move(*value));  // taken as it is, never expanded
  }
  return env;
}

Result<ExpandedCommand> ExpandCommand(const api::Container& container, const EnvList& env) {
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    std::optional<std::string> found;
    for (const auto& [k, v] : env) {
      if (k == name) found = v;
    }
    return found;
  };
  ExpandedCommand out;
  size_t bytes = EnvBytes(env);
  auto expand = [&](const std::vector<std::string>& from, std::vector<std::string>& to,
                    const char* field) -> Status {
    for (size_t i = 0; i < from.size(); ++i) {
      std::optional<std::string> value = runtime::ExpandReferences(from[i], lookup);
      if (!value) return TooLong(fmt::format("{}[{}]", field, i));
      bytes += value->size() + 1;
      if (bytes > runtime::kMaxEnvAndArgvBytes) return TooMuch(bytes);
      to.push_back(std::move(*value));
    }
    return OkStatus();
  };
  RETURN_IF_ERROR(expand(container.command, out.command, "command"));
  RETURN_IF_ERROR(expand(container.args, out.args, "args"));
  return out;
}

Result<std::vector<std::string>> ContainerArgv(const api::Container& container,
                                               const EnvList& env) {
  if (container.command.empty()) {
    return FailedPreconditionError(fmt::format(
        "container {} has no command: on the machine's files (its pod's trainyard.dev/root: "
        "host, or --root host) there is no image entrypoint to fall back on; set command (and "
        "args), or run it in its image",
        container.name));
  }
  ASSIGN_OR_RETURN(ExpandedCommand expanded, ExpandCommand(container, env));
  std::vector<std::string> argv = std::move(expanded.command);
  argv.insert(argv.end(), expanded.args.begin(), expanded.args.end());
  return argv;
}

}  // namespace trainyard::node
