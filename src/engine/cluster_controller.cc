#include "engine/cluster_controller.h"

#include <algorithm>

#include "controller/job_reconciler.h"

namespace trainyard::engine {
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

// Ports are never allocated on a cluster (ReconcilerOptions::cluster).
class NoPorts final : public controller::PortAllocator {
 public:
  Result<int> Allocate() override { return InternalError("no ports are allocated on a cluster"); }
  void Release(int) override {}
};

NoPorts no_ports;

}  // namespace

ClusterController::ClusterController(ClusterControllerOptions options)
    : options_(std::move(options)), queue_(options_.clock, options_.on_reconcile) {
  controller::ReconcilerOptions jobs{.store = options_.store,
                                     .clock = options_.clock,
                                     .ports = &no_ports,
                                     .exec_command = options_.exec_command,
                                     .cluster = options_.cluster};
  reconcilers_.push_back(std::make_unique<OnlyKinds>(
      std::make_unique<controller::JobReconciler>(std::move(jobs)), options_.job_kinds));
  for (const auto& r : reconcilers_) queue_.Register(r.get());
}

ClusterController::~ClusterController() {
  if (watch_ != 0) options_.store->StopWatch(watch_);
}

void ClusterController::RequestStop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
}

void ClusterController::Wait() {
  std::unique_lock lock(mu_);
  auto ready = [&] { return stop_ || !changed_.empty(); };
  if (std::optional<TimePoint> timer = queue_.NextTimer()) {
    Duration left = std::max(Duration::zero(), *timer - options_.clock->Now());
    wake_.wait_for(lock, left, ready);
  } else {
    wake_.wait(lock, ready);
  }
}

Status ClusterController::Run() {
  ASSIGN_OR_RETURN(watch_, options_.store->Watch(0, [this](const store::WatchEvent& e) {
    {
      std::lock_guard lock(mu_);
      changed_.push_back(e.object);
    }
    wake_.notify_all();
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
      std::lock_guard lock(mu_);
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

}  // namespace trainyard::engine
