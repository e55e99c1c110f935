#include "api/training_job.h"

namespace trainyard::api {

const ReplicaSpec* TrainingJob::FindReplica(std::string_view type) const {
  auto it = spec.replica_specs.find(std::string(type));
  return it == spec.replica_specs.end() ? nullptr : &it->second;
}

int32_t TrainingJob::Replicas(std::string_view type) const {
  const ReplicaSpec* replica = FindReplica(type);
  return replica == nullptr ? 0 : replica->replicas.value_or(1);
}

int32_t TrainingJob::TotalReplicas() const {
  int32_t total = 0;
  for (const auto& [type, replica] : spec.replica_specs) total += replica.replicas.value_or(1);
  return total;
}

}  // namespace trainyard::api
