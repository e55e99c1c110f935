#include "server/metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/json.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "common/strings.h"
#include "server/api_path.h"
#include "server/handler.h"
#include "server/handler_internal.h"

namespace trainyard::server {
namespace {

// Upstream's framework label for each kind; "" for kinds it does not count.
std::string Framework(const std::string& kind) {
  const api::ResourceType* type = api::ResourceTypeOfKind(kind);
  return type == nullptr ? "" : type->framework;
}

std::string LastCondition(const api::Json& job) {
  auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return "";
  auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array() || conditions->empty()) return "";
  const api::Json& last = conditions->back();
  return api::StringAt(last, "type");
}

std::string Escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// The apiserver's label: WATCH, LIST or GET for a read, else the method.
std::string Verb(const ApiRequest& request, const ApiTarget* target) {
  if (request.method != "GET") return request.method;
  return AsciiUpper(internal::ReadVerb(request, target != nullptr && target->name.empty()));
}

}  // namespace

void Histogram::Observe(double seconds) {
  for (size_t i = 0; i < kBounds.size(); ++i) {
    if (seconds <= kBounds[i]) ++buckets_[i];
  }
  ++count_;
  sum_ += seconds;
}

std::string Histogram::Render(const std::string& name, const std::string& labels) const {
  std::string out;
  for (size_t i = 0; i < kBounds.size(); ++i) {
    out += fmt::format("{}_bucket{{{}le=\"{}\"}} {}\n", name, labels, kBounds[i], buckets_[i]);
  }
  out += fmt::format("{}_bucket{{{}le=\"+Inf\"}} {}\n", name, labels, count_);
  std::string bare =
      labels.empty() ? ""
                     : fmt::format("{{{}}}", std::string_view(labels).substr(0, labels.size() - 1));
  out += fmt::format("{}_sum{} {}\n{}_count{} {}\n", name, bare, sum_, name, bare, count_);
  return out;
}

Metrics::Metrics(std::vector<std::string> job_kinds) : job_kinds_(std::move(job_kinds)) {
  if (job_kinds_.empty()) {
    for (const api::KindInfo& info : api::AllKinds()) job_kinds_.emplace_back(info.name);
  }
}

void Metrics::Seed(const store::ObjectReader& store) {
  MutexLock lock(mu_);
  for (const std::string& kind : job_kinds_) {
    (void)store.Scan(kind, "", [&](const api::Json& job) TRAINYARD_REQUIRES(mu_) {
      std::string state = LastCondition(job);
      job_state_[api::StringAt(job, {"metadata", "uid"})] = state;
      // No controller has seen it yet (made while none ran): created now,
      // as a controller's informer reports what it first lists.
      if (state.empty()) {
        ++job_counters_["created"]
                       [{api::StringAt(job, {"metadata", "namespace"}), Framework(kind)}];
      }
    });
  }
}

bool Metrics::OwnedByJob(const api::Json& object) const {
  const api::Json* owners = api::FindAt(object, {"metadata", "ownerReferences"});
  if (owners == nullptr || !owners->is_array()) return false;
  for (const api::Json& owner : *owners) {
    if (!api::BoolAt(owner, "controller")) continue;
    std::string kind = api::StringAt(owner, "kind");
    // job_kinds_ holds every job kind when none was named.
    return std::find(job_kinds_.begin(), job_kinds_.end(), kind) != job_kinds_.end();
  }
  return false;
}

void Metrics::ObservePod(const store::WatchEvent& event) {
  std::string uid = api::StringAt(event.object, {"metadata", "uid"});
  if (event.type == store::EventType::kDeleted) {
    ++object_counters_["deleted_pods"];
    pod_phase_.erase(uid);
    return;
  }
  if (event.type == store::EventType::kAdded) ++object_counters_["created_pods"];
  std::string phase = api::StringAt(event.object, {"status", "phase"});
  std::string& before = pod_phase_[uid];
  if (phase == "Failed" && before != "Failed") ++object_counters_["failed_pods"];
  before = phase;
}

void Metrics::ObserveChange(const store::WatchEvent& event) {
  std::string kind = api::StringAt(event.object, "kind");
  bool pod = api::IsPodObject(event.object);
  if ((pod || kind == "PodGroup") && OwnedByJob(event.object)) {
    MutexLock lock(mu_);
    if (pod) {
      ObservePod(event);
    } else if (event.type != store::EventType::kModified) {
      ++object_counters_[event.type == store::EventType::kAdded ? "created_pod_groups"
                                                                : "deleted_pod_groups"];
    }
    return;
  }
  std::string framework = Framework(kind);
  if (framework.empty()) return;
  std::pair<std::string, std::string> labels{api::StringAt(event.object, {"metadata", "namespace"}),
                                             framework};
  std::string uid = api::StringAt(event.object, {"metadata", "uid"});
  MutexLock lock(mu_);
  if (event.type == store::EventType::kAdded) ++job_counters_["created"][labels];
  if (event.type == store::EventType::kDeleted) {
    ++job_counters_["deleted"][labels];
    job_state_.erase(uid);
    return;
  }
  std::string now = LastCondition(event.object);
  std::string& before = job_state_[uid];
  if (now == before) return;
  before = now;
  if (now == "Succeeded") ++job_counters_["successful"][labels];
  if (now == "Failed") ++job_counters_["failed"][labels];
  if (now == "Restarting") ++job_counters_["restarted"][labels];
}

void Metrics::ObserveReconcile(double seconds) {
  MutexLock lock(mu_);
  reconcile_.Observe(seconds);
}

void Metrics::ObserveRequest(const ApiRequest& request, int code, double seconds) {
  Result<ApiTarget> target = ParseApiPath(request.path);
  std::string resource = target.ok() ? target->resource->plural : "";
  if (target.ok() && !target->subresource.empty()) resource += "/" + target->subresource;
  std::string verb = Verb(request, target.ok() ? &*target : nullptr);
  MutexLock lock(mu_);
  ++requests_[{verb, resource, code}];
  request_latency_[{verb, resource}].Observe(seconds);
}

std::string Metrics::Render(const store::ObjectReader& store) const {
  // Gauges, from what the store holds now.
  int64_t running = 0;
  (void)store.Scan("Pod", "", [&](const api::Json& pod) {
    running += api::StringAt(pod, {"status", "phase"}) == "Running";
  });
  int64_t waiting = 0;
  for (const std::string& kind : job_kinds_) {
    (void)store.Scan(kind, "", [&](const api::Json& job) {
      std::string state = LastCondition(job);
      waiting += state.empty() || state == "Created";
    });
  }
  MutexLock lock(mu_);
  std::string out;
  for (const char* counter : {"created", "deleted", "successful", "failed", "restarted"}) {
    std::string name = fmt::format("training_operator_jobs_{}_total", counter);
    out +=
        fmt::format("# HELP {} Counts number of jobs {}\n# TYPE {} counter\n", name, counter, name);
    auto it = job_counters_.find(counter);
    if (it == job_counters_.end()) continue;
    for (const auto& [labels, n] : it->second) {
      out += fmt::format("{}{{framework=\"{}\",job_namespace=\"{}\"}} {}\n", name,
                         Escape(labels.second), Escape(labels.first), n);
    }
  }
  static constexpr std::pair<const char*, const char*> kObjectCounters[] = {
      {"created_pods", "created pods"},
      {"deleted_pods", "deleted pods"},
      {"failed_pods", "failed pods"},
      {"created_pod_groups", "created pod groups"},
      {"deleted_pod_groups", "deleted pod groups"}};
  for (const auto& [counter, what] : kObjectCounters) {
    auto it = object_counters_.find(counter);
    out += fmt::format(
        "# HELP {0}_total The total number of {1}\n# TYPE {0}_total counter\n{0}_total {2}\n",
        counter, what, it == object_counters_.end() ? 0 : it->second);
  }
  out += fmt::format(
      "# HELP trainyard_running_replicas Replica processes running now\n"
      "# TYPE trainyard_running_replicas gauge\ntrainyard_running_replicas {}\n"
      "# HELP trainyard_queue_depth Jobs created and not yet running\n"
      "# TYPE trainyard_queue_depth gauge\ntrainyard_queue_depth {}\n",
      running, waiting);
  out +=
      "# HELP trainyard_reconcile_duration_seconds Time to reconcile one job\n"
      "# TYPE trainyard_reconcile_duration_seconds histogram\n";
  out += reconcile_.Render("trainyard_reconcile_duration_seconds", "");
  out +=
      "# HELP trainyard_apiserver_request_total API requests by verb, resource and code\n"
      "# TYPE trainyard_apiserver_request_total counter\n";
  for (const auto& [key, n] : requests_) {
    const auto& [verb, resource, code] = key;
    out += fmt::format(
        "trainyard_apiserver_request_total{{code=\"{}\",resource=\"{}\",verb=\"{}\"}} {}\n", code,
        Escape(resource), verb, n);
  }
  out +=
      "# HELP trainyard_apiserver_request_duration_seconds API request latency by verb and "
      "resource\n# TYPE trainyard_apiserver_request_duration_seconds histogram\n";
  for (const auto& [key, histogram] : request_latency_) {
    out += histogram.Render(
        "trainyard_apiserver_request_duration_seconds",
        fmt::format("resource=\"{}\",verb=\"{}\",", Escape(key.second), key.first));
  }
  return out;
}

}  // namespace trainyard::server
