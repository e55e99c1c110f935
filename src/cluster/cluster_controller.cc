#include "cluster/cluster_controller.h"

#include <fmt/format.h>

#include <algorithm>

#include "controller/experiment_reconciler.h"
#include "controller/job_reconciler.h"
#include "controller/optimization_job_reconciler.h"
#include "controller/trainjob_reconciler.h"
#include "controller/trial_reconciler.h"

namespace trainyard::cluster {
namespace {

// A reconciler that takes some of the kinds another one does.
class OnlyKinds final : public controller::Reconciler {
 public:
  OnlyKinds(std::unique_ptr<controller::Reconciler> inner, std::vector<std::string> kinds)
      : inner_(std::move(inner)), kinds_(std::move(kinds)) {}
  std::vector<std::string> Kinds() const override { return kinds_; }
  Result<controller::ReconcileResult> Reconcile(const store::ObjectKey& key) override {
    return inner_->Reconcile(key);
  }

 private:
  std::unique_ptr<controller::Reconciler> inner_;
  std::vector<std::string> kinds_;
};

// Ports are never allocated on a cluster (ReplicaOptions::cluster).
class NoPorts final : public controller::PortAllocator {
 public:
  Result<int> Allocate(const std::string&) override {
    return InternalError("no ports are allocated on a cluster");
  }
  void Release(int) override {}
  void ReleaseAll(const std::string&) override {}
};

NoPorts no_ports;

// Why an experiment cannot run on a cluster yet: File and TensorFlowEvent
// collectors read what trial pods write to their own file system; TrainJob
// trials need the operator to follow TrainJobs and their JobSets
// (`trainer`).
std::optional<std::string> UnsupportedOnCluster(const api::Experiment& experiment, bool trainer) {
  const api::Json* template_ =
      experiment.spec.trial_template ? &experiment.spec.trial_template->trial_spec : nullptr;
  if (!trainer && template_ != nullptr && api::StringAt(*template_, "kind") == "TrainJob") {
    return std::string(
        "spec.trialTemplate.trialSpec.kind TrainJob: this operator does not follow TrainJobs "
        "and their JobSets, so it would never see its trials end: run it with --trainer as well "
        "as --katib");
  }
  const auto& spec = experiment.spec.metrics_collector_spec;
  std::string kind = spec && spec->collector ? spec->collector->kind : "StdOut";
  if (kind != "Push" && kind != "StdOut") {
    return fmt::format(
        "spec.metricsCollectorSpec.collector.kind {}: it reads files inside the trial pods, "
        "which on a cluster needs a collector sidecar in each pod, and trainyard injects none "
        "yet; use kind: StdOut (the operator reads the primary container's log through the API) "
        "or kind: Push (the trial POSTs its metrics to $TRAINYARD_METRICS_URL with "
        "$TRAINYARD_METRICS_TOKEN as its bearer token)",
        kind);
  }
  if (experiment.spec.algorithm && experiment.spec.algorithm->algorithm_name == "pbt") {
    return std::string(
        "spec.algorithm.algorithmName pbt: its trials hand checkpoints on through directories "
        "of one machine, which a cluster's pods do not share; not on a cluster yet");
  }
  return std::nullopt;
}

}  // namespace

ClusterController::ClusterController(ClusterControllerOptions options)
    : options_(std::move(options)), queue_(options_.clock, options_.on_reconcile, options_.log) {
  controller::ReplicaOptions replicas{
      .ports = &no_ports, .exec_command = options_.exec_command, .cluster = options_.cluster};
  if (options_.trainer) {
    reconcilers_.push_back(
        std::make_unique<controller::TrainJobReconciler>(controller::TrainJobReconcilerOptions{
            .store = options_.store, .clock = options_.clock, .replicas = replicas}));
  }
  if (options_.trainer) {
    // Its trials' printed metrics are read where Katib's are (--katib);
    // without it, what trials push is what it reads.
    reconcilers_.push_back(std::make_unique<controller::OptimizationJobReconciler>(
        controller::OptimizationJobReconcilerOptions{
            .store = options_.store,
            .observations = options_.katib ? options_.katib->observations : nullptr,
            .clock = options_.clock,
            .check_stored = true}));
  }
  reconcilers_.push_back(std::make_unique<OnlyKinds>(
      std::make_unique<controller::JobReconciler>(controller::JobReconcilerOptions{
          .store = options_.store, .clock = options_.clock, .replicas = std::move(replicas)}),
      options_.job_kinds));
  if (options_.katib) {
    pod_logs_.emplace(PodLogMetricsOptions{.log = options_.log,
                                           .store = options_.store,
                                           .observations = options_.katib->observations,
                                           .source = options_.katib->pod_logs,
                                           .clock = options_.clock});
    reconcilers_.push_back(
        std::make_unique<controller::ExperimentReconciler>(controller::ExperimentReconcilerOptions{
            .store = options_.store,
            .observations = options_.katib->observations,
            .clock = options_.clock,
            .unsupported =
                [trainer = options_.trainer](const api::Experiment& experiment) {
                  return UnsupportedOnCluster(experiment, trainer);
                },
            .check_stored = true}));
    reconcilers_.push_back(std::make_unique<controller::TrialReconciler>(
        controller::TrialReconcilerOptions{.store = options_.store,
                                           .observations = options_.katib->observations,
                                           .clock = options_.clock,
                                           .api_url = options_.katib->push_url,
                                           .read_output =
                                               [this](const api::Trial& trial, bool job_finished) {
                                                 return pod_logs_->Collect(trial, job_finished);
                                               },
                                           // Pushes wake no watch: how soon early
                                           // stopping sees them.
                                           .poll = std::chrono::seconds(1)}));
  }
  for (const auto& r : reconcilers_) queue_.Register(r.get());
}

ClusterController::~ClusterController() {
  if (watch_ != 0) options_.store->StopWatch(watch_);
  if (pod_logs_) pod_logs_->Stop();
}

void ClusterController::RequestStop() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  wake_.NotifyAll();
}

void ClusterController::Wait() {
  MutexLock lock(mu_);
  auto ready = [&]() TRAINYARD_REQUIRES(mu_) { return stop_ || !changed_.empty(); };
  if (std::optional<TimePoint> timer = queue_.NextTimer()) {
    Duration left = std::max(Duration::zero(), *timer - options_.clock->Now());
    wake_.WaitFor(mu_, left, ready);
  } else {
    wake_.Wait(mu_, ready);
  }
}

Status ClusterController::Run() {
  ASSIGN_OR_RETURN(watch_, options_.store->Watch(0, [this](const store::WatchEvent& e) {
    {
      MutexLock lock(mu_);
      changed_.push_back(e.object);
    }
    wake_.NotifyAll();
  }));
  // What is there already is reconciled from where it stands, as after a
  // restart: names are upstream's, so nothing is created twice.
  for (const std::string& kind : queue_.Kinds()) {
    RETURN_IF_ERROR(
        options_.store->Scan(kind, "", [&](const api::Json& o) { queue_.OnChange(o); }));
  }
  while (true) {
    std::vector<api::Json> changed;
    {
      MutexLock lock(mu_);
      if (stop_) return OkStatus();
      changed.swap(changed_);
    }
    for (const api::Json& object : changed) queue_.OnChange(object);
    queue_.TakeDueTimers();
    if (!queue_.empty()) {
      queue_.ReconcileNext();
      continue;
    }
    Wait();
  }
}

}  // namespace trainyard::cluster
