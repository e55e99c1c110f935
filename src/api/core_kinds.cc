#include "api/core_kinds.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/core_hooks.h"
#include "api/names.h"
#include "api/validation_internal.h"
#include "common/strings.h"

namespace trainyard::api {
namespace {

constexpr size_t kMaxSecretBytes = 1024 * 1024;

void DefaultSecret(SecretFields& secret) {
  if (secret.type.empty()) secret.type = "Opaque";
  // As the API server does: stringData is write-only, merged into data.
  for (const auto& [key, value] : secret.string_data) secret.data[key] = Base64Encode(value);
  secret.string_data.clear();
}

void ValidateSecret(const SecretFields& secret, ValidationResult& out) {
  size_t total = 0;
  for (const auto& [key, value] : secret.data) {
    for (const std::string& p : internal::ConfigKeyProblems(key)) {
      out.errors.push_back(FieldError::Invalid(FieldPath("data"), key, p));
    }
    std::optional<std::string> bytes = Base64Decode(value);
    if (!bytes) {
      // Never the value itself: it is a secret.
      out.errors.push_back(FieldError::InvalidRendered(FieldPath("data").Key(key), "\"<secret>\"",
                                                       "must be base64-encoded"));
    }
    total += bytes ? bytes->size() : 0;
  }
  if (total > kMaxSecretBytes) {
    out.errors.push_back(FieldError::TooLong(FieldPath("data"), kMaxSecretBytes));
  }
}

void DefaultService(ServiceFields& service) {
  ServiceSpec& spec = service.spec;
  if (spec.type.empty()) spec.type = "ClusterIP";
  if (spec.session_affinity.empty()) spec.session_affinity = "None";
  for (ServicePort& port : spec.ports) {
    if (port.protocol.empty()) port.protocol = "TCP";
    if (port.target_port.is_null()) port.target_port = port.port;
  }
}

void ValidateService(const ServiceFields& service, ValidationResult& out) {
  const ServiceSpec& spec = service.spec;
  FieldPath path("spec");
  static const std::vector<std::string> kTypes = {"ClusterIP", "NodePort", "LoadBalancer",
                                                  "ExternalName"};
  if (std::find(kTypes.begin(), kTypes.end(), spec.type) == kTypes.end()) {
    out.errors.push_back(FieldError::NotSupported(path.Child("type"), spec.type, kTypes));
  }
  if (spec.type != "ExternalName" && spec.ports.empty() && spec.cluster_ip != "None") {
    out.errors.push_back(FieldError::Required(path.Child("ports")));
  }
  static const std::vector<std::string> kProtocols = {"TCP", "UDP", "SCTP"};
  std::set<std::string> names;
  for (size_t i = 0; i < spec.ports.size(); ++i) {
    const ServicePort& port = spec.ports[i];
    FieldPath at = path.Child("ports").Index(static_cast<int64_t>(i));
    if (port.port < 1 || port.port > 65535) {
      out.errors.push_back(FieldError::Invalid(at.Child("port"), port.port,
                                               "must be between 1 and 65535, inclusive"));
    }
    if (std::find(kProtocols.begin(), kProtocols.end(), port.protocol) == kProtocols.end()) {
      out.errors.push_back(
          FieldError::NotSupported(at.Child("protocol"), port.protocol, kProtocols));
    }
    if (spec.ports.size() > 1 && port.name.empty()) {
      out.errors.push_back(FieldError::Required(at.Child("name"), "when more than one port"));
    }
    if (!port.name.empty() && !names.insert(port.name).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("name"), port.name));
    }
    if (!port.target_port.is_string() && !port.target_port.is_number_integer()) {
      out.errors.push_back(
          TypeError(at.Child("targetPort"), port.target_port, "a port number or name"));
    }
  }
  internal::ValidateLabels(spec.selector, path.Child("selector"), out);
  // Stored and served, for clients and for the operator mode that creates
  // them on a cluster; locally nothing proxies a Service.
  out.warnings.push_back(
      "Service: stored and served, but trainyard does not route its traffic: replicas on this "
      "machine reach one another directly, as their environment says");
}

void DefaultClaim(PersistentVolumeClaimFields& claim) {
  if (claim.spec.volume_mode.empty()) claim.spec.volume_mode = "Filesystem";
  if (!claim.status.is_object()) claim.status = Json::object();
  if (!claim.status.contains("phase")) claim.status["phase"] = "Pending";
}

void ValidateClaim(const PersistentVolumeClaimFields& claim, ValidationResult& out) {
  const PersistentVolumeClaimSpec& spec = claim.spec;
  FieldPath path("spec");
  static const std::vector<std::string> kModes = {"ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany",
                                                  "ReadWriteOncePod"};
  if (spec.access_modes.empty()) {
    out.errors.push_back(
        FieldError::Required(path.Child("accessModes"), "at least 1 access mode is required"));
  }
  for (size_t i = 0; i < spec.access_modes.size(); ++i) {
    if (std::find(kModes.begin(), kModes.end(), spec.access_modes[i]) == kModes.end()) {
      out.errors.push_back(FieldError::NotSupported(
          path.Child("accessModes").Index(static_cast<int64_t>(i)), spec.access_modes[i], kModes));
    }
  }
  if (!spec.resources.requests.contains("storage")) {
    out.errors.push_back(
        FieldError::Required(path.Child("resources").Child("requests").Key("storage")));
  }
  internal::ValidateResourceList(spec.resources.requests, path.Child("resources").Child("requests"),
                                 out);
  static const std::vector<std::string> kVolumeModes = {"Filesystem", "Block"};
  if (std::find(kVolumeModes.begin(), kVolumeModes.end(), spec.volume_mode) == kVolumeModes.end()) {
    out.errors.push_back(
        FieldError::NotSupported(path.Child("volumeMode"), spec.volume_mode, kVolumeModes));
  }
  // What a cluster's provisioner acts on, and this machine's one folder
  // per claim cannot: said, never dropped in silence.
  if (spec.storage_class_name) {
    out.warnings.push_back(fmt::format(
        "spec.storageClassName \"{}\": recorded only; every claim is bound to a folder of its "
        "own under trainyard's home, on this machine's disk",
        *spec.storage_class_name));
  }
  // ReadWriteOnce and ReadWriteMany hold on one machine as they are; these
  // two promise what a folder here does not enforce.
  for (const std::string& mode : spec.access_modes) {
    if (mode != "ReadOnlyMany" && mode != "ReadWriteOncePod") continue;
    out.warnings.push_back(fmt::format(
        "spec.accessModes {}: recorded only; every pod on this machine may read and write the "
        "claim's folder",
        mode));
  }
  if (spec.volume_mode == "Block") {
    out.warnings.push_back(
        "spec.volumeMode Block: no pod here can use it, as a claim here is a folder; use "
        "Filesystem");
  }
  for (const auto& [field, value] :
       {std::pair{"volumeName", Json(spec.volume_name)}, std::pair{"selector", spec.selector},
        std::pair{"dataSource", spec.data_source}, std::pair{"dataSourceRef", spec.data_source_ref},
        std::pair{"volumeAttributesClassName", spec.volume_attributes_class_name}}) {
    if (value.is_null() || (value.is_string() && value.get<std::string>().empty())) continue;
    out.warnings.push_back(fmt::format(
        "spec.{}: not acted on; the claim is bound to the folder of its name under trainyard's "
        "home, as it is",
        field));
  }
}

}  // namespace

ObjectHooks SecretHooks() {
  return internal::CoreHooks<SecretFields>("Secret", DefaultSecret, ValidateSecret);
}

ObjectHooks ServiceHooks() {
  return internal::CoreHooks<ServiceFields>("Service", DefaultService, ValidateService);
}

ObjectHooks PersistentVolumeClaimHooks() {
  return internal::CoreHooks<PersistentVolumeClaimFields>("PersistentVolumeClaim", DefaultClaim,
                                                          ValidateClaim);
}

}  // namespace trainyard::api
