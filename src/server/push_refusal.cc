#include "server/push_refusal.h"

#include <fmt/format.h>

#include "api/object.h"
#include "server/handler_internal.h"
#include "tracking/trial_observations.h"

namespace trainyard::server {

using internal::BadRequest;

// Why `trial` takes no pushed metrics, if it does not.
std::optional<ApiError> RefusePush(const api::Trial& trial) {
  std::string kind = api::CollectorKindOf(trial);
  if (kind != "Push") {
    return BadRequest(fmt::format(
        "trial {} collects its metrics with the {} collector; only trials of an experiment "
        "whose metricsCollectorSpec.collector.kind is Push take pushed metrics",
        trial.metadata.name, kind));
  }
  if (std::string finished = tracking::FinishedAs(trial); !finished.empty()) {
    return MakeApiError(409, "Conflict",
                        fmt::format("trial {} has finished ({}): its observation log is closed",
                                    trial.metadata.name, finished));
  }
  return std::nullopt;
}

}  // namespace trainyard::server
