// apps/v1 Deployment, kept as a CoreObject (api/core_object.h): the fields
// trainyard acts on typed, the rest (strategy, status) kept as sent. A
// Deployment keeps `replicas` pods of its template running until it is
// deleted (controller/deployment_reconciler.h); it is what an operator's
// install runs (`trainyard manifests operator`).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/core_object.h"
#include "api/pod.h"
#include "api/reflect.h"
#include "api/registry.h"

namespace trainyard::api {

inline constexpr std::string_view kAppsGroupVersion = "apps/v1";
// The label a Deployment's pods carry: the hash of the template they were
// made from, as Kubernetes names it.
inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";

struct DeploymentSpec {
  static constexpr bool kReflected = true;
  std::optional<int32_t> replicas;  // 1 by default
  Json selector;                    // a LabelSelector; required
  PodTemplateSpec template_;
  Json strategy;  // {type: RollingUpdate|Recreate, rollingUpdate: {...}}
  std::optional<int32_t> min_ready_seconds;
  std::optional<int32_t> revision_history_limit;     // 10 by default
  std::optional<int32_t> progress_deadline_seconds;  // 600 by default
  std::optional<bool> paused;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("replicas", s.replicas);
    v("selector", s.selector);
    v("template", s.template_);
    v("strategy", s.strategy);
    v("minReadySeconds", s.min_ready_seconds);
    v("revisionHistoryLimit", s.revision_history_limit);
    v("progressDeadlineSeconds", s.progress_deadline_seconds);
    v("paused", s.paused);
  }
};

struct DeploymentFields {
  static constexpr bool kReflected = true;
  DeploymentSpec spec;
  Json status;
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("spec", s.spec);
    v("status", s.status);
  }
};

// Whether `labels` satisfy a LabelSelector (matchLabels and
// matchExpressions with In, NotIn, Exists, DoesNotExist). An empty
// selector matches everything, as in Kubernetes; one that is not an
// object, nothing.
bool SelectorMatches(const Json& selector, const std::map<std::string, std::string>& labels);

// A LabelSelector as Kubernetes writes one in a string ("app=web,tier in
// (a,b)"), as a Scale's status.selector shows it.
std::string FormatLabelSelector(const Json& selector);

ObjectHooks DeploymentHooks();

// The typed fields of a decoded Deployment (a CoreObject of its kind).
DeploymentFields DeploymentFieldsOf(const CoreObject& deployment);

}  // namespace trainyard::api
