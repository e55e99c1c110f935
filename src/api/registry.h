// The resource registry: one descriptor per kind the API serves, read by
// everything that acts on kinds (server discovery and routing, kubectl-style
// name resolution in the CLI, decoding and validation, the engine's
// dispatch, metrics, printing). Adding a kind is adding its descriptor
// here; if something reconciles it, one reconciler registered with the
// engine besides.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_strategy.h"
#include "api/job_shape.h"
#include "api/json.h"
#include "api/object.h"
#include "api/printer_columns.h"
#include "api/validation.h"

namespace trainyard::api {

// What trainyard does with objects of a kind.
enum class ResourceRole {
  kCluster,  // Namespace, Node: the API's own, never in a manifest
  kRecord,   // Event, Lease: written by controllers, read by users
  kPod,      // written by job controllers, run by the node agent
  kJob,      // runs replicas: the Kubeflow job kinds and batch/v1 Job
  kTuning,   // Katib's Experiment, Trial, Suggestion
  kConfig,   // read by pods and controllers: ConfigMap, Secret, ...
  kPolicy,   // configures the scheduler: queues, flavors, priorities, quotas
  // Keeps pods running until deleted, never finishing: apps/v1 Deployment,
  // what an operator's install runs.
  kWorkload,
  // What an install of an operator applies beside its Deployment (CRDs,
  // RBAC, webhook configurations): served by an API-only server alone, kept as
  // sent, so that `trainyard manifests all | kubectl apply -f -` works
  // there as on a cluster; a trainyard server has no use for them and
  // serves them not.
  kInstall,
};

// How objects of a kind are read, defaulted, checked and written back.
// Unset for kinds that are no manifest (Namespace, Node, Event, Lease,
// Pod): the API keeps those as sent.
struct ObjectHooks {
  // Reads a manifest into its typed object, reporting every wrongly typed
  // or unknown field.
  std::function<Object(const Json&, FieldErrors&)> decode;
  // Idempotent: defaulting a defaulted object changes nothing.
  std::function<void(Object&)> set_defaults;
  // The kind's own rules (metadata is checked for every kind).
  std::function<void(const Object&, ValidationResult&)> validate;
  // decode(encode(x)) == x.
  std::function<Json(const Object&)> encode;
  // The rules of a change (a replace or patch) beyond metadata's, for a
  // kind whose own rules are not dispatched by its C++ type (a TrainJob's
  // fields are a core object's); unset for most.
  std::function<void(const Object& old_object, const Object& new_object, FieldErrors&)>
      validate_update;
};

// A kind's scale subresource (`kubectl scale`, autoscalers), as
// autoscaling/v1 Scale shows it: where the wanted and the running replicas
// are in its objects, and its pods' label selector, as a string.
struct ScaleSubresource {
  std::vector<std::string> spec_replicas;    // {"spec", "replicas"}
  std::vector<std::string> status_replicas;  // {"status", "replicas"}
  std::function<std::string(const Json&)> selector;
};

struct ResourceType {
  std::string group;  // "" for the core group
  std::string version;
  std::string kind;  // "PyTorchJob", as objects and the API name it
  // The kind as stores key it: `kind`, but for a kind whose name another
  // group's kind took first, which is qualified by its group
  // ("PodGroup.scheduling.x-k8s.io"), so that the two never share keys.
  std::string store_kind;
  std::string plural;  // "pytorchjobs"
  std::string singular;
  bool namespaced = true;
  bool has_status = false;  // a status subresource
  bool has_log = false;     // pods/log
  std::vector<std::string> verbs;
  std::vector<std::string> short_names;
  // What kubectl expands a category to (`kubectl get all`).
  std::vector<std::string> categories;
  ResourceRole role = ResourceRole::kConfig;
  ObjectHooks hooks;
  // Names are DNS-1035 labels (jobs and Services: they name DNS entries)
  // rather than DNS-1123 subdomains.
  bool label_names = false;
  std::function<std::vector<PrinterColumn>()> columns;
  // Upstream's `framework` label of the training_operator_* metrics:
  // "pytorch"; empty for kinds it does not count.
  std::string framework;
  // Reasons of a Failed condition that do not end the job: it goes on
  // once what it waits for comes (a TrainJob's missing runtime).
  std::vector<std::string> retried_failure_reasons;
  // The defaults kube-apiserver sets as it creates an object, from the
  // uid it gave it (a batch/v1 Job's selector); unset for most kinds.
  std::function<void(Json&)> create_defaults;
  // What the API server does with it beyond storing it.
  ApiStrategy strategy;
  // Set: it has a scale subresource.
  std::optional<ScaleSubresource> scale;
  // Its values are secrets: base64 in `data`, never printed, and kept in
  // files only their replica's user reads, in memory (a Secret).
  bool secret_values = false;
  // How a job kind is laid out (ResourceRole::kJob alone).
  std::optional<JobShape> job_shape;

  bool Allows(std::string_view verb) const;  // a verb of `verbs`
  std::string GroupVersion() const;          // "kubeflow.org/v1", or "v1" for core
  // Kubernetes' qualified resource name in messages: "pytorchjobs.kubeflow.org", "pods".
  std::string Qualified() const;
};

// Every resource, in discovery order.
const std::vector<ResourceType>& AllResourceTypes();
// nullptr when there is none. `kind` as stores key it (`store_kind`).
const ResourceType* ResourceTypeOfKind(std::string_view kind);
// The type of an object, by its apiVersion and kind; nullptr when none.
const ResourceType* ResourceTypeOf(const Json& object);
// The key under which stores keep `object`: its type's store_kind, or its
// kind as written when no type serves it.
std::string StoreKindOf(const Json& object);
const ResourceType* FindResourceType(std::string_view group, std::string_view version,
                                     std::string_view plural);
// What kubectl takes for a resource, in any case: "pytorchjob",
// "pytorchjobs", "PyTorchJob", "po".
const ResourceType* ResolveResourceType(std::string_view word);
// Whether objects of `kind` run replicas (ResourceRole::kJob), and the
// names of those kinds, in registry order.
bool IsJobKind(std::string_view kind);
// Whether objects of `kind` keep pods running until deleted
// (ResourceRole::kWorkload: Deployment).
bool IsWorkloadKind(std::string_view kind);
std::vector<std::string> JobKindNames();
// What trainyard keeps of what objects of `kind` report (as stores key
// it); kNone for a kind it serves not.
Tracking TrackingOf(std::string_view kind);
// Whether objects of `kind` hold secrets (ResourceType::secret_values).
bool HoldsSecrets(std::string_view kind);
// The shape of a job kind (as stores key it); nullptr for other kinds.
const JobShape* JobShapeOf(std::string_view kind);

}  // namespace trainyard::api
