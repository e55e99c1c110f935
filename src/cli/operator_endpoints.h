// The operator's own HTTP endpoints, where upstream's are: /metrics in
// Prometheus' text format on --metrics-bind-address (":8080"; upstream's
// training_operator_jobs_* counters and the gauges of server/metrics.h),
// and /healthz and /readyz on --health-probe-bind-address (":8081") for
// the Deployment's probes. An address is "[host]:port"; "0" serves none.
// With Katib on (--katib), the metrics address serves the trials'
// observation logs too, as the server's API does
// (server/trial_observations.h): GET .../trials/NAME/observations, and
// POST there for the Push collector, with the trial's own token.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "server/metrics.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace httplib {
class Server;
}

namespace trainyard::cli {

// Where trials' observation logs are read and written.
struct TrialObservations {
  const store::ObjectReader* trials = nullptr;  // the cluster's Trials
  store::ObservationLog* log = nullptr;
  const Clock* clock = &RealClock::Get();
  // Whether this replica acts (leads, and has read the cluster): the log is
  // the acting replica's own, so only it answers.
  const std::atomic<bool>* acting = nullptr;
};

class OperatorEndpoints {
 public:
  OperatorEndpoints();
  ~OperatorEndpoints();

  // `ready`: whether /readyz says yes now.
  // `observations`: null without Katib.
  Status Start(const std::string& metrics_address, const std::string& probe_address,
               const server::Metrics& metrics, const store::ObjectReader& store,
               std::function<bool()> ready, const TrialObservations* observations = nullptr);
  void Stop();

 private:
  // Listens on `address`; says where.
  Status Listen(httplib::Server& server, const std::string& address, const char* what);

  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
};

}  // namespace trainyard::cli
