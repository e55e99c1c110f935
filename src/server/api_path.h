// What a request path names: a resource, and in it a namespace, an object
// and a subresource, as Kubernetes lays out its REST paths:
//   /api/v1/namespaces/<ns>/pods/<name>/log
//   /apis/kubeflow.org/v1/namespaces/<ns>/pytorchjobs/<name>/status
//   /apis/kubeflow.org/v1/pytorchjobs            (every namespace)
//   /api/v1/namespaces/<name>                    (a Namespace)
// Every name and namespace in a path is a DNS-1123 subdomain, so none can
// reach outside what it names (no "/", no "..").
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/resources.h"

namespace trainyard::server {

struct ApiTarget {
  const Resource* resource = nullptr;
  std::string namespace_;   // empty: cluster-scoped, or every namespace
  std::string name;         // empty: the collection
  std::string subresource;  // "", "status", "scale", "log", ...
};

// NOT_FOUND for a path that names no resource; INVALID_ARGUMENT for a
// name or namespace that cannot be one.
Result<ApiTarget> ParseApiPath(std::string_view path);

// A URL's query (what follows "?"), as Go's url.ParseQuery reads it: pairs
// split at "&", each at its first "=" (so `labelSelector=app=x` is the
// selector `app=x`), then %XX and "+" decoded. A malformed escape leaves
// that pair out, as Go reports it and Kubernetes then ignores the pair.
std::multimap<std::string, std::string> ParseQuery(std::string_view query);

}  // namespace trainyard::server
