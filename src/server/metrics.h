// /metrics in Prometheus' text format: upstream's job counters
// (training_operator_jobs_{created,deleted,successful,failed,restarted}_total
// by job_namespace and framework; {created,deleted,failed}_pods_total and
// {created,deleted}_pod_groups_total of the jobs' pods and PodGroups,
// unlabelled as upstream's), replicas running and jobs waiting now,
// how long reconciles take, and API requests by verb, resource and code
// with their latency. Thread-safe: HTTP threads and the control loop report
// to it.
#pragma once

#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/mutex.h"
#include "store/object_store.h"

namespace trainyard::server {

struct ApiRequest;

class Histogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05,   0.1,   0.25,   0.5,   1,    2.5};
  void Observe(double seconds);
  // The _bucket, _sum and _count lines, with `labels` ("" or `a="b",`).
  std::string Render(const std::string& name, const std::string& labels) const;

 private:
  std::array<uint64_t, kBounds.size()> buckets_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  // Counts and gauges over `job_kinds` (empty: every job kind).
  explicit Metrics(std::vector<std::string> job_kinds = {});

  // Jobs already finished when the server starts are not counted again;
  // those no controller has seen yet (no condition) are counted created.
  void Seed(const store::ObjectReader& store);
  // A committed store change: jobs created, deleted, and reaching
  // Succeeded, Failed or Restarting; their pods created, deleted and
  // failing; their PodGroups created and deleted.
  void ObserveChange(const store::WatchEvent& event);
  void ObserveReconcile(double seconds);
  void ObserveRequest(const ApiRequest& request, int code, double seconds);
  // Everything, with the gauges read from the store now.
  std::string Render(const store::ObjectReader& store) const;

 private:
  // A job's pod or PodGroup (its controller one of the counted kinds).
  bool OwnedByJob(const api::Json& object) const;
  void ObservePod(const store::WatchEvent& event) TRAINYARD_REQUIRES(mu_);
  // (namespace, framework) -> count, per counter.
  using Counts = std::map<std::pair<std::string, std::string>, uint64_t>;
  std::vector<std::string> job_kinds_;  // set once
  mutable Mutex mu_;
  std::map<std::string, Counts> job_counters_ TRAINYARD_GUARDED_BY(mu_);  // "created", ...
  // uid -> last condition
  std::map<std::string, std::string> job_state_ TRAINYARD_GUARDED_BY(mu_);
  // "created_pods", ...: upstream's unlabelled counters
  std::map<std::string, uint64_t> object_counters_ TRAINYARD_GUARDED_BY(mu_);
  std::map<std::string, std::string> pod_phase_ TRAINYARD_GUARDED_BY(mu_);  // uid -> phase
  Histogram reconcile_ TRAINYARD_GUARDED_BY(mu_);
  // (verb, resource, code) and (verb, resource)
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ TRAINYARD_GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, Histogram> request_latency_
      TRAINYARD_GUARDED_BY(mu_);
};

}  // namespace trainyard::server
