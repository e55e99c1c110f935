// core/v1 ConfigMap: named files and values that pods read through
// configMap volumes and configMapKeyRef env, and that the MPI controller
// writes the launcher's hostfile and rsh agent into.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/meta.h"

namespace trainyard::api {

inline constexpr std::string_view kCoreGroupVersion = "v1";

struct ConfigMap {
  ObjectMeta metadata;
  std::map<std::string, std::string> data;
  std::map<std::string, std::string> binary_data;  // base64, as Kubernetes keeps it
  std::optional<bool> immutable;
  bool operator==(const ConfigMap&) const = default;
};

}  // namespace trainyard::api
