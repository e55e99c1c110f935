#include "server/table.h"

#include <fmt/format.h>

#include "api/printer_columns.h"

namespace trainyard::server {
namespace {

api::Json RowObject(const api::Json& object, const std::string& include) {
  if (include == "Object") return object;
  api::Json meta = object.contains("metadata") ? object["metadata"] : api::Json::object();
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", std::move(meta)}};
}

}  // namespace

bool WantsTable(const std::string& accept) {
  return accept.find("as=Table") != std::string::npos &&
         accept.find("g=meta.k8s.io") != std::string::npos;
}

namespace {

// One object's cell. Objects come from clients, status included: a value
// of a shape no column expects is "<invalid>" in its cell (as kubectl
// prints what it cannot read), never the failure of the whole list.
api::Json Cell(const api::PrinterColumn& column, const api::Json& object, TimePoint now) {
  try {
    return column.cell(object, now);
  } catch (const std::exception&) {
    return "<invalid>";
  }
}

}  // namespace

api::Json MakeTable(const Resource& resource, const std::vector<const api::Json*>& objects,
                    const std::string& resource_version, const TableOptions& options) {
  std::vector<api::PrinterColumn> columns = resource.columns();
  api::Json table = {{"kind", "Table"},
                     {"apiVersion", "meta.k8s.io/v1"},
                     {"metadata", {{"resourceVersion", resource_version}}},
                     {"columnDefinitions", api::Json::array()},
                     {"rows", api::Json::array()}};
  if (options.with_columns) {
    for (const api::PrinterColumn& c : columns) {
      table["columnDefinitions"].push_back({{"name", c.name},
                                            {"type", c.type},
                                            {"format", c.format},
                                            {"description", ""},
                                            {"priority", c.priority}});
    }
  }
  for (const api::Json* object : objects) {
    api::Json cells = api::Json::array();
    for (const api::PrinterColumn& c : columns) cells.push_back(Cell(c, *object, options.now));
    api::Json row = {{"cells", std::move(cells)}};
    if (options.include_object != "None")
      row["object"] = RowObject(*object, options.include_object);
    table["rows"].push_back(std::move(row));
  }
  return table;
}

}  // namespace trainyard::server
