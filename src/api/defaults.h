// Defaulting, as upstream v1.9 applies it (the in-memory defaults of
// pkg/apis/kubeflow.org/v1/*_defaults.go plus the CRD's server-side default
// runPolicy.suspend=false), and Kubernetes' defaults for batch/v1 Job.
// SetDefaults is idempotent: defaulting a defaulted object changes nothing.
//
// Unlike upstream, trainyard defaults before it validates, so a PyTorchJob
// whose Master omits `replicas` is accepted with 1 instead of being rejected
// with "must be 1" (upstream defect: no mutating webhook in v1).
#pragma once

#include "api/object.h"

namespace trainyard::api {

void SetDefaults(Object& object);
void SetDefaults(TrainingJob& job);
void SetDefaults(BatchJob& job);
inline void SetDefaults(ConfigMap&) {}     // Kubernetes defaults nothing in one
inline void SetDefaults(PolicyObject&) {}  // defaults are applied where they are read
// Katib's mutating webhook (experiment_defaults.go), plus PaddleJob and
// JAXJob trial templates, which Katib does not know.
void SetDefaults(Experiment& experiment);
inline void SetDefaults(Trial&) {}       // the experiment controller writes them whole
inline void SetDefaults(Suggestion&) {}  // likewise

// The defaults kube-apiserver sets as it creates an object, from the uid it
// gave it: a batch/v1 Job without manualSelector selects its pods by
// `batch.kubernetes.io/controller-uid`, and its template carries that
// label and the job-name labels (both spellings), so that kubectl finds a
// Job's own pods (`kubectl logs job/x`).
// By the kind's descriptor (ResourceType::create_defaults).
void SetDefaultsOnCreate(Json& object);
namespace internal {
void SetBatchJobCreateDefaults(Json& object);  // batch/v1 Job's create_defaults
}  // namespace internal

// The cleanPodPolicy in force: MPIJob's legacy spec.cleanPodPolicy yields to
// runPolicy's, as upstream's reconciler syncs them.
std::string EffectiveCleanPodPolicy(const TrainingJob& job);

}  // namespace trainyard::api
