#include "node/image_run_as.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "api/json.h"
#include "image/image_user.h"

namespace trainyard::node {
namespace {

// A securityContext field, the container's over the pod's.
const api::Json* ContextField(const api::Pod& pod, const api::Container& container,
                              const char* field) {
  for (const api::Json* extra : {&container.extra, &pod.spec.extra}) {
    const api::Json* value = api::FindAt(*extra, {"securityContext", field});
    if (value != nullptr && !value->is_null()) return value;
  }
  return nullptr;
}

// "user[:group]" as the pod and the image ask, or "" for the image's
// default (root).
std::string AskedUser(const api::Pod& pod, const api::Container& container,
                      const image::ImageConfig& config) {
  const api::Json* uid = ContextField(pod, container, "runAsUser");
  const api::Json* gid = ContextField(pod, container, "runAsGroup");
  std::string user = config.user.substr(0, config.user.find(':'));
  if (uid != nullptr && uid->is_number_integer()) user = std::to_string(uid->get<int64_t>());
  if (gid != nullptr && gid->is_number_integer()) {
    return fmt::format("{}:{}", user.empty() ? "0" : user, gid->get<int64_t>());
  }
  return uid != nullptr ? user : config.user;
}

// The pod's securityContext.supplementalGroups, added to the user's own as
// the kubelet adds them.
std::vector<gid_t> SupplementalGroups(const api::Pod& pod) {
  std::vector<gid_t> out;
  for (const api::Json& gid :
       api::ArrayRefAt(pod.spec.extra, {"securityContext", "supplementalGroups"})) {
    if (gid.is_number_unsigned() || (gid.is_number_integer() && gid.get<int64_t>() >= 0)) {
      out.push_back(static_cast<gid_t>(gid.get<int64_t>()));
    }
  }
  return out;
}

// Whether the container's env or the image's ENV gives HOME.
bool SetsHome(const ImageRoot& root, const api::Container& container) {
  return std::any_of(container.env.begin(), container.env.end(),
                     [](const api::EnvVar& v) { return v.name == "HOME"; }) ||
         std::any_of(root.config.env.begin(), root.config.env.end(),
                     [](const auto& entry) { return entry.first == "HOME"; });
}

}  // namespace

Result<std::optional<runtime::Credentials>> ImageRunAs(const api::Pod& pod,
                                                       const api::Container& container,
                                                       const ImageRoot& root,
                                                       std::optional<runtime::Credentials> chosen,
                                                       EnvList& env) {
  std::optional<std::string> home;  // the user's, where the image's database was read
  if (!chosen) {
    std::string asked = AskedUser(pod, container, root.config);
    std::vector<gid_t> supplemental = SupplementalGroups(pod);
    // The image's root user, with the pod's groups: named to be given them.
    if (asked.empty() && !supplemental.empty()) asked = "0";
    if (!asked.empty()) {
      Result<image::ImageUser> user = image::ResolveImageUser(root.layers, asked);
      if (!user.ok()) {
        return Status(user.status().code(),
                      fmt::format("container {}: {}", container.name, user.status().message()));
      }
      chosen = runtime::Credentials{.name = user->name,
                                    .uid = user->uid,
                                    .gid = user->gid,
                                    .groups = user->groups,
                                    .home = user->home,
                                    .listed = false};
      chosen->groups.insert(chosen->groups.end(), supplemental.begin(), supplemental.end());
      home = user->home;
    }
  }
  const api::Json* non_root = ContextField(pod, container, "runAsNonRoot");
  uid_t uid = chosen ? chosen->uid : geteuid();
  if (non_root != nullptr && non_root->is_boolean() && non_root->get<bool>() && uid == 0) {
    return FailedPreconditionError(fmt::format(
        "container has runAsNonRoot and image will run as root (pod: \"{}_{}\", container: {})",
        pod.metadata.name, pod.metadata.namespace_, container.name));
  }
  if (!SetsHome(root, container)) {
    if (!home) {
      Result<image::ImageUser> user = image::ResolveImageUser(root.layers, std::to_string(uid));
      home = user.ok() ? user->home : "/";
    }
    std::erase_if(env, [](const auto& entry) { return entry.first == "HOME"; });
    env.emplace_back("HOME", *home);
  }
  return chosen;
}

}  // namespace trainyard::node
