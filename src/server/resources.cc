#include "server/resources.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "api/kinds.h"
#include "api/scheduling.h"
#include "common/strings.h"

namespace trainyard::server {
namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "get",  "list",
                                            "patch",  "update", "watch"};
const std::vector<std::string> kReadVerbs = {"get", "list", "watch"};

std::vector<Resource> MakeResources() {
  std::vector<Resource> out = {
      {.group = "",
       .version = "v1",
       .plural = "namespaces",
       .singular = "namespace",
       .kind = "Namespace",
       .namespaced = false,
       .verbs = {"create", "delete", "get", "list", "watch"},
       .short_names = {"ns"}},
      {.group = "",
       .version = "v1",
       .plural = "nodes",
       .singular = "node",
       .kind = "Node",
       .namespaced = false,
       .verbs = kReadVerbs,
       .short_names = {"no"}},
      {.group = "",
       .version = "v1",
       .plural = "pods",
       .singular = "pod",
       .kind = "Pod",
       .has_status = true,
       .has_log = true,
       .verbs = {"delete", "get", "list", "watch"},
       .short_names = {"po"}},
      {.group = "",
       .version = "v1",
       .plural = "configmaps",
       .singular = "configmap",
       .kind = "ConfigMap",
       .verbs = kAllVerbs,
       .short_names = {"cm"}},
      {.group = "",
       .version = "v1",
       .plural = "events",
       .singular = "event",
       .kind = "Event",
       .verbs = kReadVerbs,
       .short_names = {"ev"}},
      {.group = "batch",
       .version = "v1",
       .plural = "jobs",
       .singular = "job",
       .kind = "Job",
       .has_status = true,
       .verbs = kAllVerbs},
  };
  const std::map<std::string, std::vector<std::string>> short_names = {
      {"ClusterQueue", {"cq"}},
      {"LocalQueue", {"queue", "queues", "lq"}},
      {"ResourceFlavor", {"flavor", "flavors", "rf"}},
      {"PriorityClass", {"pc"}},
      {"ResourceQuota", {"quota"}}};
  for (const api::PolicyKindInfo& info : api::AllPolicyKinds()) {
    std::string kind(info.name);
    std::string gv(info.group_version);
    size_t slash = gv.find('/');
    out.push_back({.group = slash == std::string::npos ? "" : gv.substr(0, slash),
                   .version = slash == std::string::npos ? gv : gv.substr(slash + 1),
                   .plural = AsciiLower(kind) + (kind.ends_with("s") ? "es" : "s"),
                   .singular = AsciiLower(kind),
                   .kind = kind,
                   .namespaced = info.namespaced,
                   .has_status = true,
                   .verbs = kAllVerbs,
                   .short_names = short_names.at(kind)});
  }
  for (const api::KindInfo& info : api::AllKinds()) {
    std::string kind(info.name);
    out.push_back({.group = "kubeflow.org",
                   .version = "v1",
                   .plural = std::string(info.plural),
                   .singular = AsciiLower(kind),
                   .kind = kind,
                   .has_status = true,
                   .verbs = kAllVerbs});
  }
  // Katib's kinds, as its CRDs name them.
  for (const char* kind : {"Experiment", "Trial", "Suggestion"}) {
    std::string lower = AsciiLower(kind);
    out.push_back({.group = "kubeflow.org",
                   .version = "v1beta1",
                   .plural = lower + "s",
                   .singular = lower,
                   .kind = kind,
                   .has_status = true,
                   .verbs = kAllVerbs});
  }
  return out;
}

api::Json ResourceEntry(const Resource& r, const std::string& name, const std::string& kind,
                        const std::vector<std::string>& verbs) {
  api::Json entry = {{"name", name},
                     {"singularName", name == r.plural ? r.singular : ""},
                     {"namespaced", r.namespaced},
                     {"kind", kind},
                     {"verbs", verbs}};
  if (name == r.plural && !r.short_names.empty()) entry["shortNames"] = r.short_names;
  return entry;
}

}  // namespace

std::string Resource::GroupVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string Resource::Qualified() const { return group.empty() ? plural : plural + "." + group; }

const std::vector<Resource>& AllResources() {
  static const std::vector<Resource> resources = MakeResources();
  return resources;
}

const Resource* FindResource(const std::string& group, const std::string& version,
                             const std::string& plural) {
  for (const Resource& r : AllResources()) {
    if (r.group == group && r.version == version && r.plural == plural) return &r;
  }
  return nullptr;
}

const Resource* ResourceOfKind(const std::string& kind) {
  for (const Resource& r : AllResources()) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

api::Json VersionDocument() {
  // The Kubernetes API this server speaks; clients compare it with their own.
  return {{"major", "1"},        {"minor", "29"},           {"gitVersion", "v1.29.0-trainyard"},
          {"gitCommit", ""},     {"gitTreeState", "clean"}, {"buildDate", ""},
          {"goVersion", "none"}, {"compiler", "trainyard"}, {"platform", "linux/amd64"}};
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

api::Json GroupDocument(const std::string& group) {
  std::set<std::string> unique;
  for (const Resource& r : AllResources()) {
    if (r.group == group) unique.insert(r.version);
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

api::Json GroupListDocument() {
  std::set<std::string> groups;
  for (const Resource& r : AllResources()) {
    if (!r.group.empty()) groups.insert(r.group);
  }
  api::Json list = api::Json::array();
  for (const std::string& g : groups) {
    api::Json doc = GroupDocument(g);
    doc.erase("kind");
    doc.erase("apiVersion");
    list.push_back(std::move(doc));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}};
}

api::Json ResourceListDocument(const std::string& group, const std::string& version) {
  api::Json resources = api::Json::array();
  for (const Resource& r : AllResources()) {
    if (r.group != group || r.version != version) continue;
    resources.push_back(ResourceEntry(r, r.plural, r.kind, r.verbs));
    if (r.has_status) {
      resources.push_back(
          ResourceEntry(r, r.plural + "/status", r.kind, {"get", "patch", "update"}));
    }
    if (r.has_log) resources.push_back(ResourceEntry(r, r.plural + "/log", "Pod", {"get"}));
  }
  if (resources.empty()) return nullptr;
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group.empty() ? version : group + "/" + version},
          {"resources", resources}};
}

}  // namespace trainyard::server
