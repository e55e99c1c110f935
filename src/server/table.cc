#include "server/table.h"

#include <fmt/format.h>

#include <functional>

#include "server/table_columns.h"

namespace trainyard::server {
namespace {

using internal::Age;
using internal::AgeColumn;
using internal::Array;
using internal::Column;
using internal::Int;
using internal::NameColumn;
using internal::Str;

// kubectl's STATUS for a pod: the phase, or what its container waits on
// or ended with.
std::string PodStatus(const api::Json& pod) {
  if (!Str(pod, {"metadata", "deletionTimestamp"}).empty()) return "Terminating";
  std::string reason = Str(pod, {"status", "phase"});
  if (reason.empty()) reason = "Pending";
  if (std::string r = Str(pod, {"status", "reason"}); !r.empty()) reason = r;
  for (const api::Json& c : Array(pod, {"status", "containerStatuses"})) {
    if (std::string w = Str(c, {"state", "waiting", "reason"}); !w.empty()) {
      reason = w;
    } else if (c.contains("state") && c["state"].contains("terminated")) {
      std::string t = Str(c, {"state", "terminated", "reason"});
      int64_t signal = Int(c, {"state", "terminated", "signal"});
      int64_t code = Int(c, {"state", "terminated", "exitCode"});
      reason = !t.empty()    ? t
               : signal != 0 ? fmt::format("Signal:{}", signal)
                             : fmt::format("ExitCode:{}", code);
    }
  }
  return reason;
}

std::vector<Column> PodColumns() {
  return {
      NameColumn(),
      {"Ready", "string", "", 0,
       [](const api::Json& o, TimePoint) {
         size_t ready = 0;
         const api::Json& statuses = Array(o, {"status", "containerStatuses"});
         for (const api::Json& c : statuses)
           ready += c.is_object() && c.contains("ready") && c["ready"] == true;
         size_t total = std::max(Array(o, {"spec", "containers"}).size(), statuses.size());
         return fmt::format("{}/{}", ready, total);
       }},
      {"Status", "string", "", 0, [](const api::Json& o, TimePoint) { return PodStatus(o); }},
      {"Restarts", "string", "", 0,
       [](const api::Json& o, TimePoint) {
         int64_t n = 0;
         for (const api::Json& c : Array(o, {"status", "containerStatuses"}))
           n += Int(c, {"restartCount"});
         return std::to_string(n);
       }},
      AgeColumn(),
      {"IP", "string", "", 1,
       [](const api::Json& o, TimePoint) {
         return Str(o, {"status", "podIP"});
       }},
      {"Node", "string", "", 1,
       [](const api::Json& o, TimePoint) {
         return Str(o, {"spec", "nodeName"});
       }},
  };
}

std::string BatchJobStatus(const api::Json& job) {
  std::string status = "Running";
  for (const api::Json& c : Array(job, {"status", "conditions"})) {
    if (Str(c, {"status"}) != "True") continue;
    std::string type = Str(c, {"type"});
    if (type == "Complete" || type == "Failed" || type == "Suspended") status = type;
  }
  return status;
}

std::vector<Column> BatchJobColumns() {
  return {
      NameColumn(),
      {"Status", "string", "", 0, [](const api::Json& o, TimePoint) { return BatchJobStatus(o); }},
      {"Completions", "string", "", 0,
       [](const api::Json& o, TimePoint) {
         int64_t succeeded = Int(o, {"status", "succeeded"});
         int64_t completions = Int(o, {"spec", "completions"}, -1);
         if (completions >= 0) return fmt::format("{}/{}", succeeded, completions);
         int64_t parallelism = Int(o, {"spec", "parallelism"}, 1);
         return parallelism > 1 ? fmt::format("{}/1 of {}", succeeded, parallelism)
                                : fmt::format("{}/1", succeeded);
       }},
      {"Duration", "string", "", 0,
       [](const api::Json& o, TimePoint now) -> std::string {
         std::optional<TimePoint> start = ParseRfc3339(Str(o, {"status", "startTime"}));
         if (!start) return "";
         std::optional<TimePoint> end = ParseRfc3339(Str(o, {"status", "completionTime"}));
         return HumanDuration((end ? *end : now) - *start);
       }},
      AgeColumn(),
  };
}

std::vector<Column> TrainingJobColumns() {
  // The CRDs' additionalPrinterColumns: State is .status.conditions[-1:].type.
  return {NameColumn(),
          {"State", "string", "", 0,
           [](const api::Json& o, TimePoint) -> std::string {
             const api::Json& conditions = Array(o, {"status", "conditions"});
             return conditions.empty() ? "" : Str(conditions.back(), {"type"});
           }},
          AgeColumn()};
}

std::vector<Column> EventColumns() {
  return {
      {"Last Seen", "string", "", 0,
       [](const api::Json& o, TimePoint now) {
         std::string last = Str(o, {"lastTimestamp"});
         if (last.empty()) last = Str(o, {"eventTime"});
         if (last.empty()) last = Str(o, {"metadata", "creationTimestamp"});
         return Age(last, now);
       }},
      {"Type", "string", "", 0, [](const api::Json& o, TimePoint) { return Str(o, {"type"}); }},
      {"Reason", "string", "", 0, [](const api::Json& o, TimePoint) { return Str(o, {"reason"}); }},
      {"Object", "string", "", 0,
       [](const api::Json& o, TimePoint) {
         std::string kind = Str(o, {"involvedObject", "kind"});
         std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
         return kind + "/" + Str(o, {"involvedObject", "name"});
       }},
      {"Message", "string", "", 0,
       [](const api::Json& o, TimePoint) { return Str(o, {"message"}); }},
  };
}

std::vector<Column> ColumnsOf(const Resource& r) {
  if (r.kind == "Pod") return PodColumns();
  if (r.kind == "Job") return BatchJobColumns();
  if (r.kind == "Event") return EventColumns();
  if (r.kind == "Namespace") {
    return {NameColumn(),
            {"Status", "string", "", 0,
             [](const api::Json& o, TimePoint) {
               return Str(o, {"status", "phase"});
             }},
            AgeColumn()};
  }
  if (r.kind == "Node") {
    return {NameColumn(),
            {"Status", "string", "", 0, [](const api::Json&, TimePoint) { return "Ready"; }},
            {"Roles", "string", "", 0, [](const api::Json&, TimePoint) { return "<none>"; }},
            AgeColumn(),
            {"Version", "string", "", 0, [](const api::Json& o, TimePoint) {
               return Str(o, {"status", "nodeInfo", "kubeletVersion"});
             }}};
  }
  if (std::vector<Column> columns = internal::SchedulingColumns(r.kind); !columns.empty()) {
    return columns;
  }
  if (std::vector<Column> columns = internal::KatibColumns(r.kind); !columns.empty()) {
    return columns;
  }
  if (r.kind == "ConfigMap") {
    return {NameColumn(),
            {"Data", "integer", "", 0,
             [](const api::Json& o, TimePoint) {
               size_t n = 0;
               for (const char* field : {"data", "binaryData"}) {
                 if (o.contains(field) && o[field].is_object()) n += o[field].size();
               }
               return api::Json(n);
             }},
            AgeColumn()};
  }
  return TrainingJobColumns();
}

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
api::Json Cell(const Column& column, const api::Json& object, TimePoint now) {
  try {
    return column.cell(object, now);
  } catch (const std::exception&) {
    return "<invalid>";
  }
}

}  // namespace

api::Json MakeTable(const Resource& resource, const std::vector<const api::Json*>& objects,
                    const std::string& resource_version, const TableOptions& options) {
  std::vector<Column> columns = ColumnsOf(resource);
  api::Json table = {{"kind", "Table"},
                     {"apiVersion", "meta.k8s.io/v1"},
                     {"metadata", {{"resourceVersion", resource_version}}},
                     {"columnDefinitions", api::Json::array()},
                     {"rows", api::Json::array()}};
  if (options.with_columns) {
    for (const Column& c : columns) {
      table["columnDefinitions"].push_back({{"name", c.name},
                                            {"type", c.type},
                                            {"format", c.format},
                                            {"description", ""},
                                            {"priority", c.priority}});
    }
  }
  for (const api::Json* object : objects) {
    api::Json cells = api::Json::array();
    for (const Column& c : columns) cells.push_back(Cell(c, *object, options.now));
    api::Json row = {{"cells", std::move(cells)}};
    if (options.include_object != "None")
      row["object"] = RowObject(*object, options.include_object);
    table["rows"].push_back(std::move(row));
  }
  return table;
}

std::string HumanDuration(Duration d) {
  int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return fmt::format("{}s", seconds);
  int64_t minutes = seconds / 60;
  if (minutes < 10) {
    return seconds % 60 == 0 ? fmt::format("{}m", minutes)
                             : fmt::format("{}m{}s", minutes, seconds % 60);
  }
  if (minutes < 180) return fmt::format("{}m", minutes);
  int64_t hours = minutes / 60;
  if (hours < 8) {
    return minutes % 60 == 0 ? fmt::format("{}h", hours)
                             : fmt::format("{}h{}m", hours, minutes % 60);
  }
  if (hours < 48) return fmt::format("{}h", hours);
  if (hours < 24 * 8) {
    return hours % 24 == 0 ? fmt::format("{}d", hours / 24)
                           : fmt::format("{}d{}h", hours / 24, hours % 24);
  }
  if (hours < 24 * 365 * 2) return fmt::format("{}d", hours / 24);
  if (hours < 24 * 365 * 8) {
    int64_t days = (hours / 24) % 365;
    return days == 0 ? fmt::format("{}y", hours / 24 / 365)
                     : fmt::format("{}y{}d", hours / 24 / 365, days);
  }
  return fmt::format("{}y", hours / 24 / 365);
}

}  // namespace trainyard::server
