#include "api/pod_security.h"

namespace trainyard::api {
namespace {

// Walks every value; manifests are at most 128 levels deep (the codec's
// bound), so the recursion is too.
void CollectHostPaths(const Json& value, std::vector<std::string>& names) {
  if (value.is_array()) {
    for (const Json& item : value) CollectHostPaths(item, names);
    return;
  }
  if (!value.is_object()) return;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.key() == "volumes" && it->is_array()) {
      for (const Json& volume : *it) {
        if (volume.is_object() && volume.contains("hostPath")) {
          names.push_back(StringAt(volume, "name"));
        }
      }
    }
    CollectHostPaths(*it, names);
  }
}

}  // namespace

std::vector<std::string> HostPathVolumes(const Json& object) {
  std::vector<std::string> names;
  CollectHostPaths(object, names);
  return names;
}

bool PrivilegedNamespace(const Json* ns) {
  if (ns == nullptr || !ns->is_object()) return false;
  auto meta = ns->find("metadata");
  if (meta == ns->end() || !meta->is_object()) return false;
  auto labels = meta->find("labels");
  return labels != meta->end() && StringAt(*labels, kPodSecurityEnforceLabel) == "privileged";
}

}  // namespace trainyard::api
