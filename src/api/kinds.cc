#include "api/kinds.h"

#include <strings.h>

namespace trainyard::api {

const std::vector<KindInfo>& AllKinds() {
  static const std::vector<KindInfo> kinds = {
      {JobKind::kPyTorchJob,
       "PyTorchJob",
       "pytorchjobs",
       "pytorchReplicaSpecs",
       "pytorch",
       "pytorchjob-port",
       23456,
       true,
       "OnFailure",
       {"Master", "Worker"},
       true,
       false,
       true},
      {JobKind::kTFJob,
       "TFJob",
       "tfjobs",
       "tfReplicaSpecs",
       "tensorflow",
       "tfjob-port",
       2222,
       true,
       "Never",
       {"Chief", "Master", "PS", "Worker", "Evaluator"}},
      {JobKind::kXGBoostJob,
       "XGBoostJob",
       "xgboostjobs",
       "xgbReplicaSpecs",
       "xgboost",
       "xgboostjob-port",
       9999,
       true,
       "Never",
       {"Master", "Worker"}},
      {JobKind::kMPIJob,
       "MPIJob",
       "mpijobs",
       "mpiReplicaSpecs",
       "mpi",
       "mpi-port",
       9999,
       false,
       "Never",
       {"Launcher", "Worker"},
       false,
       true},
      {JobKind::kPaddleJob,
       "PaddleJob",
       "paddlejobs",
       "paddleReplicaSpecs",
       "paddle",
       "master",
       36543,
       true,
       "OnFailure",
       {"Master", "Worker"},
       true,
       false},
      {JobKind::kJAXJob,
       "JAXJob",
       "jaxjobs",
       "jaxReplicaSpecs",
       "jax",
       "jaxjob-port",
       6666,
       true,
       "Never",
       {"Worker"},
       true,
       false},
  };
  return kinds;
}

const KindInfo& InfoFor(JobKind kind) { return AllKinds()[static_cast<size_t>(kind)]; }

std::optional<JobKind> JobKindFromName(std::string_view name) {
  for (const KindInfo& info : AllKinds()) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

std::string CanonicalReplicaType(JobKind kind, std::string_view type) {
  for (const std::string& canonical : InfoFor(kind).replica_types) {
    if (canonical.size() == type.size() &&
        strncasecmp(canonical.data(), type.data(), type.size()) == 0) {
      return canonical;
    }
  }
  return std::string(type);
}

}  // namespace trainyard::api
