#include "api/printer_columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

namespace trainyard::api {
namespace {

// What a terminated container shows: its reason, else its signal or code.
std::string TerminatedCell(const Json& c) {
  std::string t = StringAt(c, {"state", "terminated", "reason"});
  int64_t signal = IntAt(c, {"state", "terminated", "signal"});
  int64_t code = IntAt(c, {"state", "terminated", "exitCode"});
  return !t.empty()    ? t
         : signal != 0 ? fmt::format("Signal:{}", signal)
                       : fmt::format("ExitCode:{}", code);
}

// While a pod initialises, kubectl's STATUS is its first unfinished init
// container's: "Init:<done>/<all>", or "Init:" and why it waits or failed.
std::optional<std::string> InitCell(const Json& pod) {
  const Json& statuses = ArrayRefAt(pod, {"status", "initContainerStatuses"});
  size_t all = ArrayRefAt(pod, {"spec", "initContainers"}).size();
  for (size_t i = 0; i < statuses.size(); ++i) {
    const Json& c = statuses[i];
    const Json* terminated = FindAt(c, {"state", "terminated"});
    if (terminated != nullptr && IntAt(c, {"state", "terminated", "exitCode"}) == 0) continue;
    if (FindAt(c, {"started"}) != nullptr && c["started"] == true && terminated == nullptr) {
      continue;  // a sidecar that runs
    }
    if (terminated != nullptr) return "Init:" + TerminatedCell(c);
    std::string waiting = StringAt(c, {"state", "waiting", "reason"});
    if (!waiting.empty() && waiting != "PodInitializing") return "Init:" + waiting;
    return fmt::format("Init:{}/{}", i, all);
  }
  return std::nullopt;
}

// kubectl's STATUS for a pod: the phase, or what its container waits on
// or ended with.
std::string PodStatusCell(const Json& pod) {
  if (!StringAt(pod, {"metadata", "deletionTimestamp"}).empty()) return "Terminating";
  std::string reason = StringAt(pod, {"status", "phase"});
  if (reason.empty()) reason = "Pending";
  if (std::string r = StringAt(pod, {"status", "reason"}); !r.empty()) reason = r;
  if (std::optional<std::string> init = InitCell(pod)) return *init;
  for (const Json& c : ArrayRefAt(pod, {"status", "containerStatuses"})) {
    if (std::string w = StringAt(c, {"state", "waiting", "reason"}); !w.empty()) {
      reason = w;
    } else if (c.contains("state") && c["state"].contains("terminated")) {
      reason = TerminatedCell(c);
    }
  }
  return reason;
}

}  // namespace

std::vector<PrinterColumn> PodColumns() {
  return {
      NameColumn(),
      {"Ready", "string", "", 0,
       [](const Json& o, TimePoint) {
         size_t ready = 0;
         const Json& statuses = ArrayRefAt(o, {"status", "containerStatuses"});
         for (const Json& c : statuses)
           ready += c.is_object() && c.contains("ready") && c["ready"] == true;
         size_t total = std::max(ArrayRefAt(o, {"spec", "containers"}).size(), statuses.size());
         return fmt::format("{}/{}", ready, total);
       }},
      {"Status", "string", "", 0, [](const Json& o, TimePoint) { return PodStatusCell(o); }},
      {"Restarts", "string", "", 0,
       [](const Json& o, TimePoint) {
         int64_t n = 0;
         for (const char* list : {"initContainerStatuses", "containerStatuses"}) {
           for (const Json& c : ArrayRefAt(o, {"status", list})) n += IntAt(c, {"restartCount"});
         }
         return std::to_string(n);
       }},
      AgeColumn(),
      {"IP", "string", "", 1,
       [](const Json& o, TimePoint) {
         return StringAt(o, {"status", "podIP"});
       }},
      {"Node", "string", "", 1,
       [](const Json& o, TimePoint) {
         return StringAt(o, {"spec", "nodeName"});
       }},
  };
}

namespace {

std::string BatchJobStatusCell(const Json& job) {
  std::string status = "Running";
  for (const Json& c : ArrayRefAt(job, {"status", "conditions"})) {
    if (StringAt(c, {"status"}) != "True") continue;
    std::string type = StringAt(c, {"type"});
    if (type == "Complete" || type == "Failed" || type == "Suspended") status = type;
  }
  return status;
}

}  // namespace

std::vector<PrinterColumn> BatchJobColumns() {
  std::vector<PrinterColumn> columns = {
      NameColumn(),
      {"Status", "string", "", 0, [](const Json& o, TimePoint) { return BatchJobStatusCell(o); }},
      {"Completions", "string", "", 0,
       [](const Json& o, TimePoint) {
         int64_t succeeded = IntAt(o, {"status", "succeeded"});
         int64_t completions = IntAt(o, {"spec", "completions"}, -1);
         if (completions >= 0) return fmt::format("{}/{}", succeeded, completions);
         int64_t parallelism = IntAt(o, {"spec", "parallelism"}, 1);
         return parallelism > 1 ? fmt::format("{}/1 of {}", succeeded, parallelism)
                                : fmt::format("{}/1", succeeded);
       }},
      {"Duration", "string", "", 0,
       [](const Json& o, TimePoint now) -> std::string {
         std::optional<TimePoint> start = ParseRfc3339(StringAt(o, {"status", "startTime"}));
         if (!start) return "";
         std::optional<TimePoint> end = ParseRfc3339(StringAt(o, {"status", "completionTime"}));
         return HumanDuration((end ? *end : now) - *start);
       }},
      AgeColumn(),
  };
  // Kubernetes' -o wide columns (containers, images, selector) are not
  // shown; trainyard's progress is, as for every job.
  for (PrinterColumn& c : ProgressColumns(/*priority=*/1)) columns.push_back(std::move(c));
  return columns;
}

std::vector<PrinterColumn> ProgressColumns(int priority) {
  return {{"Progress", "string", "", priority,
           [](const Json& o, TimePoint) -> std::string {
             const Json* p = FindAt(o, {"status", "trainerStatus", "progressPercentage"});
             return p != nullptr && p->is_number_integer() ? fmt::format("{}%", p->get<int64_t>())
                                                           : "";
           }},
          {"ETA", "string", "", priority, [](const Json& o, TimePoint) -> std::string {
             const Json* s = FindAt(o, {"status", "trainerStatus", "estimatedRemainingSeconds"});
             if (s == nullptr || !s->is_number_integer()) return "";
             return HumanDuration(std::chrono::seconds(s->get<int64_t>()));
           }}};
}

std::vector<PrinterColumn> TrainingJobColumns() {
  // The CRDs' additionalPrinterColumns: State is .status.conditions[-1:].type;
  // with -o wide, the progress its output declares (trainyard's).
  std::vector<PrinterColumn> columns = {
      NameColumn(),
      {"State", "string", "", 0,
       [](const Json& o, TimePoint) -> std::string {
         const Json& conditions = ArrayRefAt(o, {"status", "conditions"});
         return conditions.empty() ? "" : StringAt(conditions.back(), {"type"});
       }},
      AgeColumn()};
  for (PrinterColumn& c : ProgressColumns(/*priority=*/1)) columns.push_back(std::move(c));
  return columns;
}

std::vector<PrinterColumn> EventColumns() {
  return {
      {"Last Seen", "string", "", 0,
       [](const Json& o, TimePoint now) {
         std::string last = StringAt(o, {"lastTimestamp"});
         if (last.empty()) last = StringAt(o, {"eventTime"});
         if (last.empty()) last = StringAt(o, {"metadata", "creationTimestamp"});
         return Age(last, now);
       }},
      {"Type", "string", "", 0, [](const Json& o, TimePoint) { return StringAt(o, {"type"}); }},
      {"Reason", "string", "", 0, [](const Json& o, TimePoint) { return StringAt(o, {"reason"}); }},
      {"Object", "string", "", 0,
       [](const Json& o, TimePoint) {
         std::string kind = StringAt(o, {"involvedObject", "kind"});
         std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
         return kind + "/" + StringAt(o, {"involvedObject", "name"});
       }},
      {"Message", "string", "", 0,
       [](const Json& o, TimePoint) { return StringAt(o, {"message"}); }},
  };
}

std::vector<PrinterColumn> NameAgeColumns() { return {NameColumn(), AgeColumn()}; }

std::vector<PrinterColumn> LeaseColumns() {
  return {NameColumn(),
          {"Holder", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"spec", "holderIdentity"});
           }},
          AgeColumn()};
}

std::vector<PrinterColumn> NamespaceColumns() {
  return {NameColumn(),
          {"Status", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"status", "phase"});
           }},
          AgeColumn()};
}

std::vector<PrinterColumn> NodeColumns() {
  return {NameColumn(),
          {"Status", "string", "", 0, [](const Json&, TimePoint) { return "Ready"; }},
          {"Roles", "string", "", 0, [](const Json&, TimePoint) { return "<none>"; }},
          AgeColumn(),
          {"Version", "string", "", 0, [](const Json& o, TimePoint) {
             return StringAt(o, {"status", "nodeInfo", "kubeletVersion"});
           }}};
}

namespace {

// kubectl's DATA: how many keys a ConfigMap or Secret holds in `fields`.
PrinterColumn DataColumn(std::initializer_list<const char*> fields) {
  std::vector<const char*> keys(fields);
  return {"Data", "integer", "", 0, [keys](const Json& o, TimePoint) {
            size_t n = 0;
            for (const char* key : keys) n += ObjectAt(o, {key}).size();
            return Json(n);
          }};
}

}  // namespace

std::vector<PrinterColumn> ConfigMapColumns() {
  return {NameColumn(), DataColumn({"data", "binaryData"}), AgeColumn()};
}

std::vector<PrinterColumn> SecretColumns() {
  // A stored Secret keeps its values in data only (stringData is merged in).
  return {NameColumn(),
          {"Type", "string", "", 0,
           [](const Json& o, TimePoint) { return StringAt(o, {"type"}, "Opaque"); }},
          DataColumn({"data"}),
          AgeColumn()};
}

std::vector<PrinterColumn> ServiceColumns() {
  return {NameColumn(),
          {"Type", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"spec", "type"}, "ClusterIP");
           }},
          {"Cluster-IP", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"spec", "clusterIP"}, "<none>");
           }},
          {"External-IP", "string", "", 0, [](const Json&, TimePoint) { return "<none>"; }},
          {"Port(s)", "string", "", 0,
           [](const Json& o, TimePoint) {
             std::vector<std::string> ports;
             for (const Json& port : ArrayRefAt(o, {"spec", "ports"})) {
               ports.push_back(fmt::format("{}/{}", IntAt(port, {"port"}),
                                           StringAt(port, {"protocol"}, "TCP")));
             }
             return ports.empty() ? std::string("<none>")
                                  : fmt::format("{}", fmt::join(ports, ","));
           }},
          AgeColumn()};
}

// kubectl's: READY is ready/wanted, as `get deployments` shows it.
std::vector<PrinterColumn> DeploymentColumns() {
  auto count = [](const char* field) {
    return [field](const Json& o, TimePoint) { return Json(IntAt(o, {"status", field})); };
  };
  return {NameColumn(),
          {"Ready", "string", "", 0,
           [](const Json& o, TimePoint) {
             return fmt::format("{}/{}", IntAt(o, {"status", "readyReplicas"}),
                                IntAt(o, {"spec", "replicas"}));
           }},
          {"Up-to-date", "integer", "", 0, count("updatedReplicas")},
          {"Available", "integer", "", 0, count("availableReplicas")},
          AgeColumn()};
}

std::vector<PrinterColumn> PersistentVolumeClaimColumns() {
  return {NameColumn(),
          {"Status", "string", "", 0,
           [](const Json& o, TimePoint) {
             // As kubectl prints a claim held back by its finalizers.
             if (!StringAt(o, {"metadata", "deletionTimestamp"}).empty())
               return std::string("Terminating");
             return StringAt(o, {"status", "phase"}, "Pending");
           }},
          {"Volume", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"spec", "volumeName"});
           }},
          {"Capacity", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"status", "capacity", "storage"});
           }},
          {"Access Modes", "string", "", 0,
           [](const Json& o, TimePoint) {
             // kubectl's abbreviations: RWO, ROX, RWX, RWOP.
             std::vector<std::string> modes;
             for (const Json& mode : ArrayRefAt(o, {"status", "accessModes"})) {
               std::string m = mode.is_string() ? mode.get<std::string>() : "";
               modes.push_back(m == "ReadWriteOnce"      ? "RWO"
                               : m == "ReadOnlyMany"     ? "ROX"
                               : m == "ReadWriteMany"    ? "RWX"
                               : m == "ReadWriteOncePod" ? "RWOP"
                                                         : m);
             }
             return fmt::format("{}", fmt::join(modes, ","));
           }},
          {"StorageClass", "string", "", 0,
           [](const Json& o, TimePoint) {
             return StringAt(o, {"spec", "storageClassName"});
           }},
          AgeColumn()};
}

PrinterColumn NameColumn() {
  return {"Name", "string", "name", 0, [](const Json& o, TimePoint) {
            return StringAt(o, {"metadata", "name"});
          }};
}

PrinterColumn AgeColumn() {
  return {"Age", "date", "", 0, [](const Json& o, TimePoint now) {
            return Age(StringAt(o, {"metadata", "creationTimestamp"}), now);
          }};
}

std::string Age(const std::string& timestamp, TimePoint now) {
  std::optional<TimePoint> t = ParseRfc3339(timestamp);
  return t ? HumanDuration(now - *t) : "<unknown>";
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

}  // namespace trainyard::api
