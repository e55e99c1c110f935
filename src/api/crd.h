// CustomResourceDefinitions for the kubeflow.org/v1 job kinds, generated
// from the object model's field lists (reflect.h), so that what a cluster
// stores and what trainyard decodes cannot drift apart.
//
// Each field becomes an OpenAPI v3 node of its C++ type (strings, integers
// with their format, booleans, numbers, lists, string-keyed maps, nested
// objects); a quantity is int-or-string; a raw JSON field keeps whatever
// it holds. A type that keeps the Kubernetes fields it does not model
// (`extra`, reflect.h) is an object with its modelled properties that
// preserves unknown fields, so the API server prunes nothing trainyard's
// own validation would report; a Kubeflow type, modelled completely,
// lists its properties only, as upstream's CRDs do. Descriptions are left
// out: the schemas stay small enough for a plain `kubectl apply -f`.
#pragma once

#include <string>
#include <vector>

#include "api/json.h"
#include "api/kinds.h"

namespace trainyard::api {

// The structural openAPIV3Schema of `kind`'s objects.
Json JobOpenApiSchema(JobKind kind);

// The apiextensions.k8s.io/v1 CustomResourceDefinition of `kind`:
// upstream's names, scope, version, printer columns and subresources.
Json JobCustomResourceDefinition(JobKind kind);

// The kubeflow.org/v1beta1 CustomResourceDefinition of Katib's
// "Experiment", "Trial" or "Suggestion", as upstream's Katib declares it:
// its names and categories, printer columns, the status subresource, and a
// schema that keeps every field (Katib's CRDs check nothing: its webhook
// and controller do, as trainyard's validation does).
Json KatibCustomResourceDefinition(const std::string& kind);

// The trainer.kubeflow.org/v1alpha1 CustomResourceDefinition of
// "TrainJob", "TrainingRuntime" or "ClusterTrainingRuntime", its schema
// from the same field lists, for `trainyard operator --trainer`.
Json TrainerCustomResourceDefinition(const std::string& kind);

}  // namespace trainyard::api
