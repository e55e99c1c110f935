// Leader election over a coordination.k8s.io/v1 Lease, as client-go's
// leaderelection does it, so that of several operator replicas exactly one
// acts:
//  - a candidate takes the lease when nobody holds it, or when its holder
//    has not renewed it for leaseDurationSeconds *as this candidate's own
//    clock measures it* (from when it saw the record last change, never
//    from the holder's timestamps, so clocks need not agree);
//  - the holder renews every retry period and stops acting once it has
//    failed to renew for the renew deadline, which is shorter than the
//    lease duration: it has stopped before anyone else may take over;
//  - every write carries the resourceVersion it read, so of two candidates
//    racing for a free lease one gets a Conflict and loses.
#pragma once

#include <optional>
#include <string>

#include "api/json.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/mutex.h"
#include "kube/kube_client.h"

namespace trainyard::kube {

struct LeaderElectionOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  KubeClient* client = nullptr;
  std::string namespace_;
  std::string name;      // the Lease's
  std::string identity;  // this candidate's: host name and a random suffix
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
  const Clock* clock = &RealClock::Get();
};

class LeaderElector {
 public:
  explicit LeaderElector(LeaderElectionOptions options) : options_(std::move(options)) {}

  // One attempt to take or keep the lease: whether this candidate holds it
  // now. An error when the API server could not be asked.
  Result<bool> TryAcquireOrRenew();

  // Tries every retry period until this candidate leads (true) or Stop()
  // (false). Says once who holds it meanwhile.
  bool Acquire();
  // Renews every retry period; returns when a renewal has failed for the
  // renew deadline (leadership lost: stop acting at once) or on Stop().
  // Whether it was lost.
  bool RenewUntilLost();
  // Gives the lease up (graceful shutdown): the next candidate need not
  // wait for it to expire.
  void Release();
  // Ends Acquire() and RenewUntilLost(); thread-safe.
  void Stop();

 private:
  // Waits `d` unless stopped; whether stopped.
  bool Pause(Duration d);

  LeaderElectionOptions options_;
  api::Json observed_;         // the lease's spec as last read
  TimePoint observed_time_{};  // when this candidate saw it change
  std::string said_holder_;    // the holder last reported
  Mutex mu_;
  CondVar cv_;
  bool stopped_ TRAINYARD_GUARDED_BY(mu_) = false;
};

// Kubernetes' MicroTime: RFC 3339 with microseconds, in UTC.
std::string FormatMicroTime(TimePoint t);

}  // namespace trainyard::kube
