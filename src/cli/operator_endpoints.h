// The operator's own HTTP endpoints, where upstream's are: /metrics in
// Prometheus' text format on --metrics-bind-address (":8080"; upstream's
// training_operator_jobs_* counters and the gauges of server/metrics.h),
// and /healthz and /readyz on --health-probe-bind-address (":8081") for
// the Deployment's probes. An address is "[host]:port"; "0" serves none.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "server/metrics.h"
#include "store/object_store.h"

namespace httplib {
class Server;
}

namespace trainyard::cli {

class OperatorEndpoints {
 public:
  OperatorEndpoints();
  ~OperatorEndpoints();

  // `ready`: whether /readyz says yes now.
  Status Start(const std::string& metrics_address, const std::string& probe_address,
               const server::Metrics& metrics, const store::ObjectReader& store,
               std::function<bool()> ready);
  void Stop();

 private:
  // Listens on `address`; says where.
  Status Listen(httplib::Server& server, const std::string& address, const char* what);

  std::vector<std::unique_ptr<httplib::Server>> servers_;
  std::vector<std::thread> threads_;
};

}  // namespace trainyard::cli
