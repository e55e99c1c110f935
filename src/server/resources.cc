#include "server/resources.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "common/strings.h"

namespace trainyard::server {
namespace {

api::Json ResourceEntry(const Resource& r, const std::string& name, const std::string& kind,
                        const std::vector<std::string>& verbs) {
  api::Json entry = {{"name", name},
                     {"singularName", name == r.plural ? r.singular : ""},
                     {"namespaced", r.namespaced},
                     {"kind", kind},
                     {"verbs", verbs}};
  if (name == r.plural && !r.short_names.empty()) entry["shortNames"] = r.short_names;
  if (name == r.plural && !r.categories.empty()) entry["categories"] = r.categories;
  return entry;
}

}  // namespace

api::Json VersionDocument() {
  return {{"major", "1"},        {"minor", kKubernetesMinor}, {"gitVersion", kKubernetesVersion},
          {"gitCommit", ""},     {"gitTreeState", "clean"},   {"buildDate", ""},
          {"goVersion", "none"}, {"compiler", "trainyard"},   {"platform", "linux/amd64"}};
}

api::Json CoreVersionsDocument() {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}};
}

namespace {

// Kubernetes' version priority: GA before beta before alpha, then higher
// numbers first (v1 before v1beta1, v1beta2 before v1beta1).
std::tuple<int, int, int> VersionPriority(const std::string& version) {
  int major = 0;
  int minor = 0;
  char stage[8] = "";
  int fields = std::sscanf(version.c_str(), "v%d%7[a-z]%d", &major, stage, &minor);
  int level = fields < 2 ? 2 : std::string_view(stage) == "beta" ? 1 : 0;
  return {level, major, minor};
}

}  // namespace

bool Served(const Resource& r, bool api_only) {
  return api_only || r.role != api::ResourceRole::kInstall;
}

api::Json GroupDocument(const std::string& group, bool api_only) {
  std::set<std::string> unique;
  for (const Resource& r : api::AllResourceTypes()) {
    if (r.group == group && Served(r, api_only)) unique.insert(r.version);
  }
  if (group.empty() || unique.empty()) return nullptr;
  std::vector<std::string> versions(unique.begin(), unique.end());
  std::sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
    return VersionPriority(a) > VersionPriority(b);
  });
  api::Json list = api::Json::array();
  for (const std::string& v : versions) {
    list.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
  }
  return {{"kind", "APIGroup"},
          {"apiVersion", "v1"},
          {"name", group},
          {"versions", list},
          {"preferredVersion", list.front()}};
}

api::Json GroupListDocument(bool api_only) {
  std::set<std::string> groups;
  for (const Resource& r : api::AllResourceTypes()) {
    if (!r.group.empty() && Served(r, api_only)) groups.insert(r.group);
  }
  api::Json list = api::Json::array();
  for (const std::string& g : groups) {
    api::Json doc = GroupDocument(g, api_only);
    doc.erase("kind");
    doc.erase("apiVersion");
    list.push_back(std::move(doc));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}};
}

api::Json ResourceListDocument(const std::string& group, const std::string& version,
                               bool api_only) {
  api::Json resources = api::Json::array();
  for (const Resource& r : api::AllResourceTypes()) {
    if (r.group != group || r.version != version || !Served(r, api_only)) continue;
    resources.push_back(ResourceEntry(r, r.plural, r.kind, r.verbs));
    if (r.has_status) {
      resources.push_back(
          ResourceEntry(r, r.plural + "/status", r.kind, {"get", "patch", "update"}));
    }
    if (r.has_log) resources.push_back(ResourceEntry(r, r.plural + "/log", "Pod", {"get"}));
    if (r.scale) {
      // Its kind is another group's, which discovery names.
      api::Json entry = ResourceEntry(r, r.plural + "/scale", "Scale", {"get", "patch", "update"});
      entry["group"] = "autoscaling";
      entry["version"] = "v1";
      resources.push_back(std::move(entry));
    }
    // A scheduler's binding: an API-only server plays kube-apiserver.
    if (r.role == api::ResourceRole::kPod && api_only) {
      resources.push_back(ResourceEntry(r, "pods/binding", "Binding", {"create"}));
    }
  }
  if (resources.empty()) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

}  // namespace trainyard::server
