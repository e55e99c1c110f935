// Table columns for the scheduling kinds, as their upstreams print them
// (Kueue's printer columns, kubectl's for PriorityClass and ResourceQuota),
// plus a USAGE column on ClusterQueues: in use against nominal quota, and
// what is borrowed.
#include <fmt/format.h>

#include "api/json.h"
#include "api/printer_columns.h"

namespace trainyard::api {
namespace {

PrinterColumn IntColumn(std::string name, std::initializer_list<const char*> path,
                        int priority = 0) {
  std::vector<const char*> keys(path);
  return {std::move(name), "integer", "", priority, [keys](const Json& o, TimePoint) {
            const Json* at = &o;
            for (const char* key : keys) {
              if (!at->is_object() || !at->contains(key)) return Json(0);
              at = &(*at)[key];
            }
            return at->is_number_integer() ? *at : Json(0);
          }};
}

PrinterColumn StringColumn(std::string name, std::initializer_list<const char*> path,
                           int priority = 0) {
  std::vector<const char*> keys(path);
  return {std::move(name), "string", "", priority, [keys](const Json& o, TimePoint) {
            const Json* at = &o;
            for (const char* key : keys) {
              if (!at->is_object() || !at->contains(key)) return Json("");
              at = &(*at)[key];
            }
            return at->is_string() ? *at : Json(at->is_null() ? "" : at->dump());
          }};
}

std::string Nominal(const Json& cq, const std::string& flavor, const std::string& resource) {
  for (const Json& group : ArrayRefAt(cq, {"spec", "resourceGroups"})) {
    for (const Json& f : ArrayRefAt(group, {"flavors"})) {
      if (StringAt(f, {"name"}) != flavor) continue;
      for (const Json& r : ArrayRefAt(f, {"resources"})) {
        if (StringAt(r, {"name"}) == resource) return StringAt(r, {"nominalQuota"});
      }
    }
  }
  return "0";
}

// A ClusterQueue's "nvidia.com/gpu 12/8 (borrowing 4), cpu 10/64" (in
// use / nominal); a LocalQueue's "nvidia.com/gpu 6 (its ClusterQueue
// borrowing 4), cpu 5".
std::string Usage(const Json& queue, bool cluster) {
  std::vector<std::string> parts;
  for (const Json& flavor :
       ArrayRefAt(queue, {"status", cluster ? "flavorsUsage" : "flavorUsage"})) {
    for (const Json& r : ArrayRefAt(flavor, {"resources"})) {
      std::string name = StringAt(r, {"name"});
      std::string part = fmt::format("{} {}", name, StringAt(r, {"total"}));
      if (cluster) part += "/" + Nominal(queue, StringAt(flavor, {"name"}), name);
      std::string borrowed = StringAt(r, {"borrowed"});
      if (!borrowed.empty() && borrowed != "0") {
        part += (cluster ? " (borrowing " : " (its ClusterQueue borrowing ") + borrowed + ")";
      }
      parts.push_back(std::move(part));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// kubectl's REQUEST and LIMIT: "pods: 1/10, requests.cpu: 500m/2".
std::string QuotaPairs(const Json& rq, bool limits) {
  std::vector<std::string> parts;
  if (!rq.contains("status") || !rq["status"].is_object()) return "";
  const Json& status = rq["status"];
  if (!status.contains("hard") || !status["hard"].is_object()) return "";
  for (const auto& [key, hard] : status["hard"].items()) {
    if (key.starts_with("limits.") != limits) continue;
    parts.push_back(fmt::format("{}: {}/{}", key, StringAt(status, {"used", key.c_str()}),
                                hard.is_string() ? hard.get<std::string>() : hard.dump()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<PrinterColumn> ClusterQueueColumns() {
  return {NameColumn(),
          StringColumn("Cohort", {"spec", "cohort"}),
          StringColumn("Strategy", {"spec", "queueingStrategy"}, 1),
          IntColumn("Pending Workloads", {"status", "pendingWorkloads"}),
          IntColumn("Admitted Workloads", {"status", "admittedWorkloads"}),
          {"Usage", "string", "", 0, [](const Json& o, TimePoint) { return Usage(o, true); }}};
}

std::vector<PrinterColumn> LocalQueueColumns() {
  return {NameColumn(),
          StringColumn("ClusterQueue", {"spec", "clusterQueue"}),
          IntColumn("Pending Workloads", {"status", "pendingWorkloads"}),
          IntColumn("Admitted Workloads", {"status", "admittedWorkloads"}),
          {"Usage", "string", "", 0, [](const Json& o, TimePoint) { return Usage(o, false); }}};
}

std::vector<PrinterColumn> PriorityClassColumns() {
  return {NameColumn(),
          IntColumn("Value", {"value"}),
          {"Global-Default", "string", "", 0,
           [](const Json& o, TimePoint) -> std::string {
             // A value of another type is shown as kubectl shows a cell it cannot read.
             const Json* global = FindAt(o, {"globalDefault"});
             if (global == nullptr) return "false";
             if (!global->is_boolean()) return "<invalid>";
             return global->get<bool>() ? "true" : "false";
           }},
          StringColumn("Preemption Policy", {"preemptionPolicy"}, 1),
          AgeColumn()};
}

std::vector<PrinterColumn> ResourceQuotaColumns() {
  return {
      NameColumn(),
      AgeColumn(),
      {"Request", "string", "", 0, [](const Json& o, TimePoint) { return QuotaPairs(o, false); }},
      {"Limit", "string", "", 0, [](const Json& o, TimePoint) { return QuotaPairs(o, true); }}};
}

}  // namespace trainyard::api
