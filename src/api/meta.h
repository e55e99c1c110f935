// Object metadata, as Kubernetes' metav1.ObjectMeta. Timestamps are kept as
// the RFC 3339 strings they travel as.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/reflect.h"

namespace trainyard::api {

struct OwnerReference {
  static constexpr bool kReflected = true;
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;

  Json extra;  // fields Kubernetes has that trainyard does not model
  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("apiVersion", s.api_version);
    v("kind", s.kind);
    v("name", s.name);
    v("uid", s.uid);
    v("controller", s.controller);
    v("blockOwnerDeletion", s.block_owner_deletion);
  }
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  static constexpr bool kReflected = true;
  static constexpr std::string_view kKubernetesType = "ObjectMeta";
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::optional<int64_t> generation;
  std::string creation_timestamp;
  std::string deletion_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::vector<std::string> finalizers;
  Json extra;  // managedFields, selfLink, deletionGracePeriodSeconds, ...

  template <class S, class V>
  static void Fields(S& s, V& v) {
    v("name", s.name);
    v("generateName", s.generate_name);
    v("namespace", s.namespace_);
    v("uid", s.uid);
    v("resourceVersion", s.resource_version);
    v("generation", s.generation);
    v("creationTimestamp", s.creation_timestamp);
    v("deletionTimestamp", s.deletion_timestamp);
    v("labels", s.labels);
    v("annotations", s.annotations);
    v("ownerReferences", s.owner_references);
    v("finalizers", s.finalizers);
  }
  bool operator==(const ObjectMeta&) const = default;
};

// The name of the owner of `kind` among `owners` (the last, if several);
// empty when none is.
inline std::string OwnerNameOf(const std::vector<OwnerReference>& owners, std::string_view kind) {
  std::string name;
  for (const OwnerReference& owner : owners) {
    if (owner.kind == kind) name = owner.name;
  }
  return name;
}

}  // namespace trainyard::api
