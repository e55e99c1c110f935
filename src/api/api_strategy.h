// What the API server does with a kind beyond storing it, as
// kube-apiserver's per-resource strategies do: how its names are checked,
// what a create sets, how it is deleted, whether its code pushes
// observations. Each kind's is set on its ResourceType by the registry
// (api_strategies.cc); the server asks the type, never the kind's name.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "api/names.h"
#include "common/field_path.h"

namespace trainyard::api {

enum class Deletion {
  kDirect,        // it goes at once (or, with finalizers, once they are removed)
  kGraceful,      // a pod: it goes once its node has stopped what it runs
  kWithContents,  // a namespace: its objects go with it
};

// What trainyard keeps of what a job or trial reports (observations,
// artifacts, MLflow runs).
enum class Tracking {
  kNone,
  kOwnOutput,  // a job: its metrics are read from what it prints or writes
  kPushed,     // a Katib trial: its code may push, and Katib's log is its
};

struct ApiStrategy {
  // The problems of a name for a kind kept as sent; unset: those of a
  // DNS-1123 subdomain.
  std::function<NameProblems(std::string_view)> name_problems;
  // The checks of a kind kept as sent, beyond its name (an Event's
  // involvedObject, a Lease's duration).
  std::function<FieldErrors(const Json&)> validate_kept;
  // What every write of it sets (a namespace's finalizer and phase).
  std::function<void(Json&)> prepare_for_write;
  // What its create sets before the status is dropped (a Node's not-ready
  // taint).
  std::function<void(Json&)> prepare_for_create;
  // The status a create starts it with, where it has a status
  // subresource (a pod Pending); null: none.
  Json initial_status;
  // The defaults kube-apiserver sets on a kind trainyard keeps as sent,
  // where they show in what `kubectl apply` compares (a webhook rule's
  // scope, a CRD schema's empty properties dropped): an API-only server
  // sets them.
  std::function<void(Json&)> kube_defaults;
  Deletion deletion = Deletion::kDirect;
  // Names no one may delete ("default" of namespaces).
  std::vector<std::string> undeletable_names;
  // Kubelets register it: a trainyard server's node agents are its Nodes,
  // read from them, not from the store; on an API-only server clients,
  // playing kubelets, write them.
  bool kubelet_registered = false;
  Tracking tracking = Tracking::kNone;
  // Its trainer reports its progress with a POST to its status
  // (a TrainJob, KEP-2779; server/trainer_status.cc).
  bool trainer_status_push = false;
  // Tokens are asked of it with a POST to `<name>/token` (a
  // ServiceAccount's TokenRequest; server/service_account_tokens.h).
  bool token_request = false;
};

// The strategies of the kinds that have one of their own.
ApiStrategy NamespaceStrategy();
ApiStrategy NodeStrategy();
ApiStrategy PodStrategy();
ApiStrategy EventStrategy();
ApiStrategy LeaseStrategy();
ApiStrategy CrdStrategy();
ApiStrategy WebhookConfigurationStrategy();

}  // namespace trainyard::api
