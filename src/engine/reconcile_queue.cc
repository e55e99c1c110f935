#include "engine/reconcile_queue.h"

#include <fmt/format.h>

#include <algorithm>

namespace trainyard::engine {
namespace {

// The owner an object's controller reference names (the first owner
// reference where none is marked the controller).
std::optional<store::ObjectKey> ControllerOf(const api::Json& object, const store::ObjectKey& key) {
  const api::Json& owners = api::ArrayRefAt(object, {"metadata", "ownerReferences"});
  const api::Json* chosen = nullptr;
  for (const api::Json& owner : owners) {
    if (chosen == nullptr || api::BoolAt(owner, "controller")) {
      chosen = &owner;
    }
  }
  if (chosen == nullptr) return std::nullopt;
  return store::ObjectKey{api::StringAt(*chosen, "kind"), key.namespace_,
                          api::StringAt(*chosen, "name")};
}

}  // namespace

Duration RetryDelay(int failures) {
  Duration d = std::chrono::milliseconds(100);
  for (int i = 1; i < failures && d < std::chrono::seconds(30); ++i) d *= 2;
  return std::min<Duration>(d, std::chrono::seconds(30));
}

void ReconcileQueue::Register(controller::Reconciler* reconciler) {
  for (const std::string& kind : reconciler->Kinds()) by_kind_[kind] = reconciler;
}

std::vector<std::string> ReconcileQueue::Kinds() const {
  std::vector<std::string> kinds;
  for (const auto& [kind, reconciler] : by_kind_) kinds.push_back(kind);
  return kinds;
}

void ReconcileQueue::Queue(const store::ObjectKey& key) {
  if (queued_.insert(key.ToString()).second) queue_.push_back(key);
}

void ReconcileQueue::OnChange(const api::Json& object) {
  Result<store::ObjectKey> key = store::KeyOf(object);
  if (!key.ok()) return;
  if (by_kind_.contains(key->kind)) Queue(*key);
  std::optional<store::ObjectKey> owner = ControllerOf(object, *key);
  if (owner && by_kind_.contains(owner->kind)) Queue(*owner);
}

void ReconcileQueue::TakeDueTimers() {
  TimePoint now = clock_->Now();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    store::ObjectKey key = timers_.begin()->second;
    timers_.erase(timers_.begin());
    timer_of_.erase(key.ToString());
    Queue(key);
  }
}

std::optional<TimePoint> ReconcileQueue::NextTimer() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.begin()->first;
}

void ReconcileQueue::ReconcileNext() {
  if (queue_.empty()) return;
  store::ObjectKey key = queue_.front();
  queue_.erase(queue_.begin());
  queued_.erase(key.ToString());
  auto start = std::chrono::steady_clock::now();  // a measurement, not a decision
  std::optional<Result<controller::ReconcileResult>> reconciled = Guarded(key);
  if (on_reconcile_) on_reconcile_(std::chrono::steady_clock::now() - start);
  if (!reconciled) return;  // left alone until it changes
  Result<controller::ReconcileResult>& result = *reconciled;
  if (!result.ok()) {
    int failures = ++failures_[key.ToString()];
    if (result.status().code() != StatusCode::kAborted) {
      log_->Warning("trainyard: {}: {}", key.ToString(), result.status().message());
    }
    SetTimer(clock_->Now() + RetryDelay(failures), key);
    return;
  }
  failures_.erase(key.ToString());
  if (result->requeue_after) SetTimer(clock_->Now() + *result->requeue_after, key);
}

void ReconcileQueue::SetTimer(TimePoint at, const store::ObjectKey& key) {
  auto [known, added] = timer_of_.try_emplace(key.ToString(), at);
  if (!added) {
    if (known->second <= at) return;  // woken sooner already
    auto [first, last] = timers_.equal_range(known->second);
    for (auto it = first; it != last; ++it) {
      if (it->second.ToString() == known->first) {
        timers_.erase(it);
        break;
      }
    }
    known->second = at;
  }
  timers_.emplace(at, key);
}

std::optional<Result<controller::ReconcileResult>> ReconcileQueue::Guarded(
    const store::ObjectKey& key) {
  auto it = by_kind_.find(key.kind);
  if (it == by_kind_.end())
    return Result<controller::ReconcileResult>(controller::ReconcileResult{});
  try {
    Result<controller::ReconcileResult> result = it->second->Reconcile(key);
    left_alone_.erase(key.ToString());
    return result;
  } catch (const std::exception& e) {
    // A JSON accessor surprised by what is stored (an object, or one of
    // its pods, written in a shape the code did not expect): the same
    // reconcile would throw again, so it is said once, and the object
    // waits until it or what it owns changes. The loop, and every other
    // object, go on.
    if (left_alone_.insert(key.ToString()).second) {
      log_->Error("trainyard: {}: cannot reconcile it ({}); left alone until it changes",
                  key.ToString(), e.what());
    }
    return std::nullopt;
  }
}

}  // namespace trainyard::engine
