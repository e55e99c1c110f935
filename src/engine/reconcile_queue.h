// ReconcileQueue: what the control loop reconciles next. A change queues
// the changed object's own reconciler and its controller's (a pod's job, a
// job's trial, a trial's experiment); a reconcile that asks to look again
// later, or fails, sets a timer (failures back off from 100 ms to 30 s);
// one that throws is said once and left alone until its object changes.
// Each object is queued once however often it changes before its turn.
// Not thread-safe: the loop's thread owns it.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "common/log.h"
#include "controller/reconciler.h"
#include "store/object_store.h"

namespace trainyard::engine {

// How long to wait before retrying after `failures` errors in a row:
// 100 ms, 200 ms, ... up to 30 s.
Duration RetryDelay(int failures);

class ReconcileQueue {
 public:
  using OnReconcile = std::function<void(std::chrono::steady_clock::duration)>;
  ReconcileQueue(const Clock* clock, OnReconcile on_reconcile, Logger* log = &StderrLog())
      : clock_(clock), on_reconcile_(std::move(on_reconcile)), log_(log) {}

  // `reconciler` takes every kind it names (the last registered wins).
  void Register(controller::Reconciler* reconciler);
  bool Handles(const std::string& kind) const { return by_kind_.contains(kind); }
  // The kinds some reconciler takes, in name order.
  std::vector<std::string> Kinds() const;

  // Queues `object`'s reconciler and its controller's.
  void OnChange(const api::Json& object);
  void Queue(const store::ObjectKey& key);
  // Timers that are due join the queue.
  void TakeDueTimers();
  bool empty() const { return queue_.empty(); }
  // Reconciles the object first in the queue.
  void ReconcileNext();
  // When the first timer is due; nullopt when none is set.
  std::optional<TimePoint> NextTimer() const;

 private:
  // Reconcile, or nullopt when it threw: said once, and the object is left
  // alone until it changes.
  std::optional<Result<controller::ReconcileResult>> Guarded(const store::ObjectKey& key);
  // Wakes `key` at `at`, unless it is already to be woken sooner: one timer
  // per object, so reconciles that each ask to be repeated (a running
  // job's poll) never stack up into chains of their own.
  void SetTimer(TimePoint at, const store::ObjectKey& key);

  const Clock* clock_;
  OnReconcile on_reconcile_;
  Logger* log_;
  std::map<std::string, controller::Reconciler*, std::less<>> by_kind_;
  std::set<std::string> queued_;
  std::vector<store::ObjectKey> queue_;
  std::multimap<TimePoint, store::ObjectKey> timers_;
  std::map<std::string, TimePoint> timer_of_;  // each key's one timer in timers_
  std::map<std::string, int> failures_;        // consecutive reconcile errors per object
  std::set<std::string> left_alone_;           // keys whose reconcile threw, said once
};

}  // namespace trainyard::engine
