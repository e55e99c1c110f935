#include "kube/leader_election.h"

#include <fmt/format.h>

namespace trainyard::kube {

std::string FormatMicroTime(TimePoint t) {
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch());
  std::string seconds = FormatRfc3339(TimePoint(std::chrono::duration_cast<Duration>(
      std::chrono::duration_cast<std::chrono::seconds>(micros))));
  // "2026-01-02T03:04:05Z" → "2026-01-02T03:04:05.000123Z"
  seconds.pop_back();
  return fmt::format("{}.{:06d}Z", seconds, micros.count() % 1'000'000);
}

Result<bool> LeaderElector::TryAcquireOrRenew() {
  TimePoint now = options_.clock->Now();
  int64_t duration_seconds = std::max<int64_t>(
      1, std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count());
  api::Json mine = {{"holderIdentity", options_.identity},
                    {"leaseDurationSeconds", duration_seconds},
                    {"acquireTime", FormatMicroTime(now)},
                    {"renewTime", FormatMicroTime(now)},
                    {"leaseTransitions", 0}};
  Result<api::Json> lease = options_.client->Get("Lease", options_.namespace_, options_.name);
  if (lease.status().code() == StatusCode::kNotFound) {
    Result<api::Json> created = options_.client->Create(
        {{"apiVersion", "coordination.k8s.io/v1"},
         {"kind", "Lease"},
         {"metadata", {{"name", options_.name}, {"namespace", options_.namespace_}}},
         {"spec", mine}});
    if (created.status().code() == StatusCode::kAlreadyExists) return false;  // another was first
    RETURN_IF_ERROR(created.status());
    observed_ = mine;
    observed_time_ = now;
    return true;
  }
  RETURN_IF_ERROR(lease.status());
  api::Json spec = api::ObjectAt(*lease, "spec");
  if (spec != observed_) {
    observed_ = spec;
    observed_time_ = now;
  }
  std::string holder = api::StringAt(spec, "holderIdentity");
  int64_t held_for = api::IntAt(spec, {"leaseDurationSeconds"}, duration_seconds);
  bool held_by_other = !holder.empty() && holder != options_.identity;
  if (held_by_other && observed_time_ + std::chrono::seconds(held_for) > now) {
    if (holder != said_holder_) {
      options_.log->Info("trainyard: the lease {}/{} is held by {}; waiting for it",
                         options_.namespace_, options_.name, holder);
      said_holder_ = holder;
    }
    return false;
  }
  if (holder == options_.identity) {
    if (const api::Json* acquired = api::FindAt(spec, {"acquireTime"})) {
      mine["acquireTime"] = *acquired;
    }
    mine["leaseTransitions"] = api::IntAt(spec, {"leaseTransitions"}, 0);
  } else {
    mine["leaseTransitions"] = api::IntAt(spec, {"leaseTransitions"}, 0) + 1;
  }
  (*lease)["spec"] = mine;
  Result<api::Json> updated = options_.client->Update(*lease);
  if (updated.status().code() == StatusCode::kAborted) return false;  // someone wrote first
  RETURN_IF_ERROR(updated.status());
  observed_ = mine;
  observed_time_ = now;
  return true;
}

bool LeaderElector::Pause(Duration d) {
  MutexLock lock(mu_);
  return cv_.WaitFor(mu_, d, [this]() TRAINYARD_REQUIRES(mu_) { return stopped_; });
}

bool LeaderElector::Acquire() {
  std::string said;
  while (true) {
    Result<bool> held = TryAcquireOrRenew();
    if (held.ok() && *held) return true;
    if (!held.ok() && held.status().message() != said) {
      said = held.status().message();
      options_.log->Warning("trainyard: cannot read the lease: {}; retrying", said);
    }
    if (Pause(options_.retry_period)) return false;
  }
}

bool LeaderElector::RenewUntilLost() {
  TimePoint last_renewed = options_.clock->Now();
  while (!Pause(options_.retry_period)) {
    Result<bool> held = TryAcquireOrRenew();
    TimePoint now = options_.clock->Now();
    if (held.ok() && *held) {
      last_renewed = now;
      continue;
    }
    if (now - last_renewed >= options_.renew_deadline || (held.ok() && !*held)) {
      // Someone else holds it, or it could not be renewed in time.
      options_.log->Error("trainyard: lost the lease {}/{}: {}", options_.namespace_, options_.name,
                          held.ok() ? "another candidate holds it" : held.status().message());
      return true;
    }
  }
  return false;
}

void LeaderElector::Release() {
  Result<api::Json> lease = options_.client->Get("Lease", options_.namespace_, options_.name);
  if (!lease.ok() || api::StringAt(*lease, {"spec", "holderIdentity"}) != options_.identity) return;
  api::Json& spec = (*lease)["spec"];
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = FormatMicroTime(options_.clock->Now());
  (void)options_.client->Update(*lease);  // at worst the next one waits the lease out
}

void LeaderElector::Stop() {
  {
    MutexLock lock(mu_);
    stopped_ = true;
  }
  cv_.NotifyAll();
}

}  // namespace trainyard::kube
