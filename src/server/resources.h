// The resources the API serves, as Kubernetes' discovery describes them:
// group, version, plural, kind, scope and verbs; and the discovery
// documents kubectl and client libraries read before anything else.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"

namespace trainyard::server {

struct Resource {
  std::string group;  // "" for the core group
  std::string version;
  std::string plural;  // "pytorchjobs"
  std::string singular;
  std::string kind;  // "PyTorchJob"
  bool namespaced = true;
  bool has_status = false;  // a status subresource
  bool has_log = false;     // pods/log
  std::vector<std::string> verbs;
  std::vector<std::string> short_names;

  std::string GroupVersion() const;  // "kubeflow.org/v1", or "v1" for core
  // Kubernetes' qualified resource name in messages: "pytorchjobs.kubeflow.org", "pods".
  std::string Qualified() const;
};

const std::vector<Resource>& AllResources();
const Resource* FindResource(const std::string& group, const std::string& version,
                             const std::string& plural);
const Resource* ResourceOfKind(const std::string& kind);

// The documents of /version, /api, /apis, /apis/<group>, /api/v1 and
// /apis/<group>/<version>; the latter two null when no such group version.
api::Json VersionDocument();
api::Json CoreVersionsDocument();
api::Json GroupListDocument();
api::Json GroupDocument(const std::string& group);  // null when unknown
api::Json ResourceListDocument(const std::string& group, const std::string& version);

}  // namespace trainyard::server
