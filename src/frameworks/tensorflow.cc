// TFJob: TF_CONFIG, as upstream's tensorflow controller builds it, with every
// address 127.0.0.1:<that replica's port>.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "frameworks/framework_internal.h"

namespace trainyard::frameworks {
namespace {

// The replica types TF_CONFIG describes, in the order the success rules
// examine them.
const std::vector<std::string> kClusterTypes = {"Chief", "Evaluator", "Master", "PS", "Worker"};

std::string Address(const api::TrainingJob& job, const Placement& placement,
                    const std::string& type, int32_t index) {
  return fmt::format("{}:{}", placement.QualifiedHostOf(job, {type, index}),
                     placement.PortOf(type, index));
}

// {"cluster":{...},"task":{"type":..,"index":..},"environment":"cloud"}, the
// cluster's keys sorted as Go's encoding/json sorts map keys.
std::string TfConfig(const api::TrainingJob& job, const ReplicaRef& replica,
                     const Placement& placement) {
  nlohmann::json cluster = nlohmann::json::object();  // std::map: sorted keys
  nlohmann::ordered_json config;
  bool sparse = job.spec.enable_dynamic_worker.value_or(false);
  for (const std::string& type : kClusterTypes) {
    int32_t n = job.Replicas(type);
    if (n == 0) continue;
    if (sparse && type == "Worker") {
      // Each worker sees only itself, keyed by index.
      if (replica.type == "Worker") {
        cluster["worker"][std::to_string(replica.index)] =
            Address(job, placement, type, replica.index);
      }
      continue;
    }
    if (sparse && replica.type == "PS" && type != "PS") continue;  // a PS sees only the PS set
    for (int32_t i = 0; i < n; ++i)
      cluster[AsciiLower(type)].push_back(Address(job, placement, type, i));
  }
  config["cluster"] = cluster;
  config["task"] = {{"type", AsciiLower(replica.type)}, {"index", replica.index}};
  if (!sparse) config["environment"] = "cloud";
  return config.dump();
}

class TensorFlow final : public Framework {
 public:
  Result<Env> InjectedEnv(const api::TrainingJob& job, const ReplicaRef& replica,
                          size_t container_index, const Placement& placement) const override {
    const api::ReplicaSpec* spec = job.FindReplica(replica.type);
    if (spec->template_.spec.containers[container_index].name != "tensorflow") return Env{};
    // A single-replica job is not distributed and gets no TF_CONFIG.
    int32_t replicas = 0;
    for (const std::string& type : kClusterTypes) replicas += job.Replicas(type);
    if (replicas == 1) return Env{};
    return Env{{"TF_CONFIG", TfConfig(job, replica, placement)}};
  }

  Verdict Evaluate(const api::TrainingJob& job, const ReplicaStates& states) const override {
    bool done = false;
    std::string chief = job.FindReplica("Chief") != nullptr    ? "Chief"
                        : job.FindReplica("Master") != nullptr ? "Master"
                                                               : "";
    if (!chief.empty()) {
      done = internal::CountsOf(states, chief).succeeded == job.Replicas(chief);
    } else {
      done = internal::CountsOf(states, "Worker").succeeded == job.Replicas("Worker");
      // By default worker-0 finishing cleanly finishes the job.
      auto worker0 = states.find(ReplicaRef{"Worker", 0});
      if (job.spec.success_policy.value_or("") != "AllWorkers" && worker0 != states.end() &&
          worker0->second.phase == ReplicaPhase::kSucceeded && worker0->second.exit_code == 0) {
        done = true;
      }
    }
    internal::FailureRules rules{
        .tolerate_failed_workers = job.spec.enable_dynamic_worker.value_or(false),
        .failed_message = [&](int32_t count, const std::string& type) {
          return fmt::format("TFJob {}/{} has failed because {} {} replica(s) failed.",
                             job.metadata.namespace_, job.metadata.name, count, type);
        }};
    return internal::Conclude(job, states, done,
                              fmt::format("TFJob {}/{} successfully completed.",
                                          job.metadata.namespace_, job.metadata.name),
                              rules);
  }

  bool IsMasterRole(const api::TrainingJob& job, const ReplicaRef& r) const override {
    if (job.FindReplica("Chief") != nullptr || job.FindReplica("Master") != nullptr)
      return r.type == "Chief" || r.type == "Master";
    return r.type == "Worker" && r.index == 0;
  }
};

}  // namespace

const Framework& TensorFlowFramework() {
  static const TensorFlow framework;
  return framework;
}

}  // namespace trainyard::frameworks
