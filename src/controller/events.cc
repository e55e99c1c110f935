#include "controller/events.h"

#include <fmt/format.h>

#include <atomic>
#include <vector>

#include "api/json.h"
#include "common/strings.h"

namespace trainyard::controller {

Status RecordEvent(store::ObjectStore& store, const Clock& clock, const InvolvedObject& object,
                   const std::string& type, const std::string& reason, const std::string& message) {
  // Kubernetes names an event after its object and a unique hex suffix;
  // the time alone is not unique under a fake clock, so a counter joins it.
  static std::atomic<uint64_t> sequence{0};
  TimePoint now = clock.Now();
  uint64_t nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  std::string when = FormatRfc3339(now);
  const api::ObjectMeta& meta = *object.meta;
  api::Json event = {{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata",
                      {{"name", fmt::format("{}.{:x}", meta.name, nanos + sequence.fetch_add(1))},
                       {"namespace", meta.namespace_}}},
                     {"involvedObject",
                      {{"apiVersion", object.api_version},
                       {"kind", object.kind},
                       {"name", meta.name},
                       {"namespace", meta.namespace_},
                       {"uid", meta.uid}}},
                     {"reason", reason},
                     {"message", message},
                     {"type", type},
                     {"source", {{"component", "trainyard-job-controller"}}},
                     {"reportingComponent", "trainyard-job-controller"},
                     {"firstTimestamp", when},
                     {"lastTimestamp", when},
                     {"count", 1}};
  return store.Create(std::move(event)).status();
}

Status DeleteEventsOf(store::ObjectStore& store, const store::ObjectKey& key) {
  std::vector<std::string> names;
  RETURN_IF_ERROR(store.Scan("Event", key.namespace_, [&](const api::Json& event) {
    auto involved = event.find("involvedObject");
    if (involved == event.end() || !involved->is_object()) return;
    if (api::StringAt(*involved, "kind") == key.kind &&
        api::StringAt(*involved, "name") == key.name) {
      names.push_back(api::StringAt(event, {"metadata", "name"}));
    }
  }));
  for (const std::string& name : names) {
    Result<api::Json> deleted = store.Delete({"Event", key.namespace_, name});
    if (!deleted.ok() && deleted.status().code() != StatusCode::kNotFound) return deleted.status();
  }
  return OkStatus();
}

Status RecordFailedValidation(store::ObjectStore& store, const Clock& clock,
                              const InvolvedObject& object, const FieldErrors& errors) {
  std::vector<std::string> parts;
  for (const FieldError& e : errors) parts.push_back(e.ToString());
  return RecordEvent(store, clock, object, "Warning", object.kind + "FailedValidation",
                     fmt::format("{} {} is invalid, so nothing is made for it: {}", object.kind,
                                 object.meta->name, Join(parts, "; ")));
}

}  // namespace trainyard::controller
