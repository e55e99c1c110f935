// Table columns for the scheduling kinds, as their upstreams print them
// (Kueue's printer columns, kubectl's for PriorityClass and ResourceQuota),
// plus a USAGE column on ClusterQueues: in use against nominal quota, and
// what is borrowed.
#include <fmt/format.h>

#include "server/table_columns.h"

namespace trainyard::server::internal {
namespace {

Column IntColumn(std::string name, std::initializer_list<const char*> path, int priority = 0) {
  std::vector<const char*> keys(path);
  return {std::move(name), "integer", "", priority, [keys](const api::Json& o, TimePoint) {
            const api::Json* at = &o;
            for (const char* key : keys) {
              if (!at->is_object() || !at->contains(key)) return api::Json(0);
              at = &(*at)[key];
            }
            return at->is_number_integer() ? *at : api::Json(0);
          }};
}

Column StringColumn(std::string name, std::initializer_list<const char*> path, int priority = 0) {
  std::vector<const char*> keys(path);
  return {std::move(name), "string", "", priority, [keys](const api::Json& o, TimePoint) {
            const api::Json* at = &o;
            for (const char* key : keys) {
              if (!at->is_object() || !at->contains(key)) return api::Json("");
              at = &(*at)[key];
            }
            return at->is_string() ? *at : api::Json(at->is_null() ? "" : at->dump());
          }};
}

std::string Nominal(const api::Json& cq, const std::string& flavor, const std::string& resource) {
  for (const api::Json& group : Array(cq, {"spec", "resourceGroups"})) {
    for (const api::Json& f : Array(group, {"flavors"})) {
      if (Str(f, {"name"}) != flavor) continue;
      for (const api::Json& r : Array(f, {"resources"})) {
        if (Str(r, {"name"}) == resource) return Str(r, {"nominalQuota"});
      }
    }
  }
  return "0";
}

// A ClusterQueue's "nvidia.com/gpu 12/8 (borrowing 4), cpu 10/64" (in
// use / nominal); a LocalQueue's "nvidia.com/gpu 6 (its ClusterQueue
// borrowing 4), cpu 5".
std::string Usage(const api::Json& queue) {
  std::vector<std::string> parts;
  bool cluster = Str(queue, {"kind"}) == "ClusterQueue";
  for (const api::Json& flavor :
       Array(queue, {"status", cluster ? "flavorsUsage" : "flavorUsage"})) {
    for (const api::Json& r : Array(flavor, {"resources"})) {
      std::string name = Str(r, {"name"});
      std::string part = fmt::format("{} {}", name, Str(r, {"total"}));
      if (cluster) part += "/" + Nominal(queue, Str(flavor, {"name"}), name);
      std::string borrowed = Str(r, {"borrowed"});
      if (!borrowed.empty() && borrowed != "0") {
        part += (cluster ? " (borrowing " : " (its ClusterQueue borrowing ") + borrowed + ")";
      }
      parts.push_back(std::move(part));
    }
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// kubectl's REQUEST and LIMIT: "pods: 1/10, requests.cpu: 500m/2".
std::string QuotaPairs(const api::Json& rq, bool limits) {
  std::vector<std::string> parts;
  if (!rq.contains("status") || !rq["status"].is_object()) return "";
  const api::Json& status = rq["status"];
  if (!status.contains("hard") || !status["hard"].is_object()) return "";
  for (const auto& [key, hard] : status["hard"].items()) {
    if (key.starts_with("limits.") != limits) continue;
    parts.push_back(fmt::format("{}: {}/{}", key, Str(status, {"used", key.c_str()}),
                                hard.is_string() ? hard.get<std::string>() : hard.dump()));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::vector<Column> SchedulingColumns(const std::string& kind) {
  if (kind == "ClusterQueue") {
    return {NameColumn(),
            StringColumn("Cohort", {"spec", "cohort"}),
            StringColumn("Strategy", {"spec", "queueingStrategy"}, 1),
            IntColumn("Pending Workloads", {"status", "pendingWorkloads"}),
            IntColumn("Admitted Workloads", {"status", "admittedWorkloads"}),
            {"Usage", "string", "", 0, [](const api::Json& o, TimePoint) { return Usage(o); }}};
  }
  if (kind == "LocalQueue") {
    return {NameColumn(),
            StringColumn("ClusterQueue", {"spec", "clusterQueue"}),
            IntColumn("Pending Workloads", {"status", "pendingWorkloads"}),
            IntColumn("Admitted Workloads", {"status", "admittedWorkloads"}),
            {"Usage", "string", "", 0, [](const api::Json& o, TimePoint) { return Usage(o); }}};
  }
  if (kind == "PriorityClass") {
    return {NameColumn(),
            IntColumn("Value", {"value"}),
            {"Global-Default", "string", "", 0,
             [](const api::Json& o, TimePoint) {
               return o.value("globalDefault", false) ? "true" : "false";
             }},
            StringColumn("Preemption Policy", {"preemptionPolicy"}, 1),
            AgeColumn()};
  }
  if (kind == "ResourceQuota") {
    return {NameColumn(),
            AgeColumn(),
            {"Request", "string", "", 0,
             [](const api::Json& o, TimePoint) { return QuotaPairs(o, false); }},
            {"Limit", "string", "", 0,
             [](const api::Json& o, TimePoint) { return QuotaPairs(o, true); }}};
  }
  if (kind == "ResourceFlavor") return {NameColumn(), AgeColumn()};
  return {};
}

}  // namespace trainyard::server::internal
