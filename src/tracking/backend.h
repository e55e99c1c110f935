// What the tracking records (MLflow's runs and experiments, kept as store
// objects, and their metrics in the observation log) are read from and
// written through: the store's durable view, writes made durable by the
// control loop one at a time, and the artifacts' root. The API server's
// Backend (server/backend.h) is one.
#pragma once

#include <functional>
#include <string>

#include "api/json.h"
#include "common/clock.h"
#include "common/status.h"
#include "store/committed_reader.h"
#include "store/control_store.h"

namespace trainyard::tracking {

class TrackingBackend {
 public:
  virtual ~TrackingBackend() = default;

  // Reads: what is durable only.
  virtual store::CommittedReader& store() = 0;
  // Runs `write` in the control loop and answers once it is durable.
  using Write = std::function<Result<api::Json>(store::ControlStore&)>;
  virtual Result<api::Json> Execute(Write write) = 0;
  // Where jobs' output folders are (api::ArtifactsDirOf); "" when none are
  // kept. How long a deleted owner's folder is kept.
  virtual std::string ArtifactsDir() const { return ""; }
  virtual Duration ArtifactsRetention() const { return Duration::zero(); }
};

}  // namespace trainyard::tracking
