// Server-side apply's field ownership, as kube-apiserver keeps it in
// metadata.managedFields: each manager's set of fields (FieldsV1: "f:name"
// for a field, "k:{...}" for an item of a list merged by key, "v:..." for
// a value of a set, "." for an item itself), from an Apply (the fields of
// its applied configuration) or an Update (the fields its writes changed).
//
// An apply sets the fields it names and takes them; a field another
// manager owns with a different value is a conflict unless forced (then
// it changes hands); a field the manager applied before and applies no
// more is removed, unless another manager owns it too. Lists merge as
// the kind's strategic merge schema says (the built-in kinds); a custom
// resource's lists are atomic, as a CRD's are by default.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/status.h"
#include "server/strategic_merge.h"

namespace trainyard::server {

// A field's path: FieldsV1 keys, outermost first.
using OwnedPath = std::vector<std::string>;
using OwnedFields = std::set<OwnedPath>;

// Who writes, and how it is recorded.
struct FieldManager {
  std::string name;         // ?fieldManager=, else the client's User-Agent up to its '/'
  std::string api_version;  // the object's apiVersion
  std::string time;         // RFC 3339, now
};

// The fields `object` sets, as FieldsV1 counts them: not apiVersion, kind,
// the server's metadata (name, namespace, uid, resourceVersion, ...) nor
// status, which a kind's status subresource owns. `schema`: nullptr for a
// custom resource.
OwnedFields FieldsOf(const api::Json& object, const PatchSchema* schema);

api::Json ToFieldsV1(const OwnedFields& fields);
OwnedFields FromFieldsV1(const api::Json& fields_v1);

struct ApplyConflict {
  std::string manager;
  std::string api_version;
  std::string field;  // ".spec.ports[port=80].targetPort", as Kubernetes says it
};

// `live` with `applied` applied by `manager`. Returns the conflicts instead
// when there are any and `force` is false. The result's managedFields say
// who owns what now.
Result<api::Json> ApplyConfiguration(const api::Json& live, const api::Json& applied,
                                     const FieldManager& manager, bool force,
                                     const PatchSchema* schema,
                                     std::vector<ApplyConflict>& conflicts);

// Records a write that is not an apply: the fields that differ between
// `before` (null for a create) and `after` become `manager`'s (an Update
// entry) and no other's. managedFields `after` carries are taken as the
// client sent them (kubectl's move from client-side apply rewrites them).
void RecordUpdate(const api::Json& before, api::Json& after, const FieldManager& manager,
                  const PatchSchema* schema);

// Kubernetes' spelling of a field path in conflicts: ".spec.ports[port=80]".
std::string DescribeField(const OwnedPath& path);

}  // namespace trainyard::server
