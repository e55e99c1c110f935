// Trainer v2 objects several tests start from.
#pragma once

namespace trainyard::api::testing {

// The smallest torch runtime, named as upstream's default one: one
// replicated job, `node`, running the trainer step.
inline constexpr const char* kTorchDistributedRuntime = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
          spec: {template: {spec: {containers: [{name: node, image: pytorch/pytorch}]}}}
)";

}  // namespace trainyard::api::testing
