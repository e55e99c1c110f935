// Server-side printing: the `Table` kubectl asks for (Accept:
// application/json;as=Table;g=meta.k8s.io;v=v1) with the columns upstream
// prints for each resource, as its descriptor names them
// (api/printer_columns.h).
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "server/resources.h"

namespace trainyard::server {

// Whether an Accept header asks for a Table.
bool WantsTable(const std::string& accept);

struct TableOptions {
  TimePoint now;
  bool with_columns = true;  // a watch sends the columns only with its first event
  // includeObject: "Metadata" (default), "Object" or "None".
  std::string include_object = "Metadata";
};

api::Json MakeTable(const Resource& resource, const std::vector<const api::Json*>& objects,
                    const std::string& resource_version, const TableOptions& options);

}  // namespace trainyard::server
