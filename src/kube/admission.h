// The operator's admission webhooks (admission.k8s.io/v1 AdmissionReview)
// for the kubeflow.org/v1 job kinds and Katib's Experiments
// (kubeflow.org/v1beta1): the very defaulting and validation of
// `trainyard validate`, so that `kubectl apply` of a bad manifest on a
// cluster is refused with the same field paths.
//
// Upstream v1.9 has validating webhooks only, which see the raw object (so
// a Master without `replicas` is refused, though the controller would
// default it to 1). Here a mutating webhook writes the defaults into the
// object first (a JSONPatch of `spec`), and validation then checks the
// defaulted object, as `trainyard validate` does. Unknown fields are
// warnings, as the API server's own default (fieldValidation=Warn) makes
// them; immutable fields are checked on UPDATE.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "api/registry.h"

namespace trainyard::kube {

// The AdmissionReview answering `review`: with the defaults as a patch
// (`mutate`), or allowed or refused with every error.
api::Json AnswerAdmission(const api::Json& review, bool mutate);

// The kinds the webhooks judge: the job kinds, then Experiment.
std::vector<const api::ResourceType*> AdmittedKinds();

// The webhooks' paths, as upstream's training-operator names them:
// /validate-kubeflow-org-v1-pytorchjob, /mutate-kubeflow-org-v1-pytorchjob;
// /validate-kubeflow-org-v1beta1-experiment.
std::string WebhookPath(std::string_view kind, bool mutate);

}  // namespace trainyard::kube
