#include "api/deployment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "api/core_hooks.h"
#include "api/names.h"
#include "api/validation_internal.h"

namespace trainyard::api {
namespace {

bool RequirementMatches(const Json& requirement, const std::map<std::string, std::string>& labels) {
  std::string key = StringAt(requirement, "key");
  std::string op = StringAt(requirement, "operator");
  auto label = labels.find(key);
  bool present = label != labels.end();
  bool listed = false;
  for (const Json& v : ArrayRefAt(requirement, {"values"})) {
    listed = listed || (present && v.is_string() && v.get<std::string>() == label->second);
  }
  if (op == "In") return listed;
  if (op == "NotIn") return !listed;
  if (op == "Exists") return present;
  if (op == "DoesNotExist") return !present;
  return false;
}

// Go's %#v of a map[string]string, as kube-apiserver's messages show labels.
std::string GoMap(const std::map<std::string, std::string>& labels) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(fmt::format("\"{}\":\"{}\"", k, v));
  return fmt::format("map[string]string{{{}}}", fmt::join(parts, ", "));
}

void DefaultDeployment(DeploymentFields& deployment) {
  DeploymentSpec& spec = deployment.spec;
  if (!spec.replicas) spec.replicas = 1;
  if (!spec.strategy.is_object()) spec.strategy = Json::object();
  if (!spec.strategy.contains("type")) spec.strategy["type"] = "RollingUpdate";
  if (!spec.revision_history_limit) spec.revision_history_limit = 10;
  if (!spec.progress_deadline_seconds) spec.progress_deadline_seconds = 600;
  if (spec.template_.spec.restart_policy.empty()) spec.template_.spec.restart_policy = "Always";
  if (!deployment.status.is_object()) deployment.status = Json::object();
}

// One matchExpressions requirement, as kube-apiserver checks it: a
// qualified key, a known operator, values for In and NotIn and none for
// Exists and DoesNotExist.
void ValidateRequirement(const Json& requirement, const FieldPath& at, ValidationResult& out) {
  std::string key = StringAt(requirement, "key");
  if (key.empty()) out.errors.push_back(FieldError::Required(at.Child("key")));
  for (const std::string& p : QualifiedNameProblems(key)) {
    if (!key.empty()) out.errors.push_back(FieldError::Invalid(at.Child("key"), key, p));
  }
  std::string op = StringAt(requirement, "operator");
  static const std::vector<std::string> kOperators = {"In", "NotIn", "Exists", "DoesNotExist"};
  if (std::find(kOperators.begin(), kOperators.end(), op) == kOperators.end()) {
    out.errors.push_back(FieldError::NotSupported(at.Child("operator"), op, kOperators));
    return;
  }
  bool has_values = !ArrayRefAt(requirement, {"values"}).empty();
  if ((op == "In" || op == "NotIn") && !has_values) {
    out.errors.push_back(FieldError::Required(
        at.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
  }
  if ((op == "Exists" || op == "DoesNotExist") && has_values) {
    out.errors.push_back(FieldError::Forbidden(
        at.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  }
}

void ValidateSelector(const DeploymentSpec& spec, const FieldPath& path, ValidationResult& out) {
  const Json& selector = spec.selector;
  if (selector.is_null() || (selector.is_object() && selector.empty())) {
    out.errors.push_back(FieldError::Required(path.Child("selector")));
    return;
  }
  if (!selector.is_object()) {
    out.errors.push_back(TypeError(path.Child("selector"), selector, "a label selector"));
    return;
  }
  if (const Json* labels = FindAt(selector, {"matchLabels"}); labels != nullptr) {
    std::map<std::string, std::string> typed;
    if (labels->is_object()) {
      for (const auto& [k, v] : labels->items()) {
        if (v.is_string()) typed[k] = v.get<std::string>();
      }
    }
    internal::ValidateLabels(typed, path.Child("selector").Child("matchLabels"), out);
  }
  const Json* listed = FindAt(selector, {"matchExpressions"});
  if (listed != nullptr && !listed->is_null() && !listed->is_array()) {
    out.errors.push_back(TypeError(path.Child("selector").Child("matchExpressions"), *listed,
                                   "a list of requirements"));
  }
  const Json& expressions = ArrayRefAt(selector, {"matchExpressions"});
  for (size_t i = 0; i < expressions.size(); ++i) {
    ValidateRequirement(
        expressions[i],
        path.Child("selector").Child("matchExpressions").Index(static_cast<int64_t>(i)), out);
  }
  // As kube-apiserver: the pods it makes must be the ones it selects.
  if (!SelectorMatches(selector, spec.template_.metadata.labels)) {
    out.errors.push_back(FieldError::InvalidRendered(
        path.Child("template").Child("metadata").Child("labels"),
        GoMap(spec.template_.metadata.labels), "`selector` does not match template `labels`"));
  }
}

void ValidateStrategy(const Json& strategy, const FieldPath& path, ValidationResult& out) {
  if (strategy.is_null()) return;
  std::string type = StringAt(strategy, "type", "RollingUpdate");
  if (type != "RollingUpdate" && type != "Recreate") {
    out.errors.push_back(
        FieldError::NotSupported(path.Child("type"), type, {"Recreate", "RollingUpdate"}));
  }
  if (FindAt(strategy, {"rollingUpdate"}) == nullptr) return;
  if (type == "Recreate") {
    out.errors.push_back(FieldError::Forbidden(
        path.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"));
    return;
  }
  // A rolling update here starts every new pod at once and stops the old
  // ones once the new run: no bound on the surge or on the unavailable.
  out.warnings.push_back(fmt::format(
      "{}: maxSurge and maxUnavailable are not read: a template change starts all the new pods, "
      "then stops the old ones once the new ones run",
      path.Child("rollingUpdate").ToString()));
}

void ValidateDeployment(const DeploymentFields& deployment, ValidationResult& out) {
  const DeploymentSpec& spec = deployment.spec;
  FieldPath path("spec");
  internal::CheckMin(spec.replicas, 0, path.Child("replicas"), out);
  internal::CheckMin(spec.min_ready_seconds, 0, path.Child("minReadySeconds"), out);
  internal::CheckMin(spec.revision_history_limit, 0, path.Child("revisionHistoryLimit"), out);
  internal::CheckMin(spec.progress_deadline_seconds, 1, path.Child("progressDeadlineSeconds"), out);
  if (spec.min_ready_seconds.value_or(0) > 0) {
    out.warnings.push_back(
        "spec.minReadySeconds: not read: a pod counts as available once its containers are ready");
  }
  ValidateSelector(spec, path, out);
  ValidateStrategy(spec.strategy, path.Child("strategy"), out);
  internal::ValidatePodTemplate(spec.template_, path.Child("template"),
                                {.restart_policies = {"Always"}}, out);
  if (spec.template_.spec.containers.empty()) {
    out.errors.push_back(
        FieldError::Required(path.Child("template").Child("spec").Child("containers")));
  }
}

}  // namespace

bool SelectorMatches(const Json& selector, const std::map<std::string, std::string>& labels) {
  if (!selector.is_object()) return false;
  if (const Json* wanted = FindAt(selector, {"matchLabels"}); wanted != nullptr) {
    if (!wanted->is_object()) return false;
    for (const auto& [k, v] : wanted->items()) {
      auto have = labels.find(k);
      if (have == labels.end() || !v.is_string() || v.get<std::string>() != have->second) {
        return false;
      }
    }
  }
  const Json& expressions = ArrayRefAt(selector, {"matchExpressions"});
  return std::all_of(expressions.begin(), expressions.end(),
                     [&](const Json& r) { return RequirementMatches(r, labels); });
}

std::string FormatLabelSelector(const Json& selector) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : ObjectAt(selector, {"matchLabels"}).items()) {
    parts.push_back(fmt::format("{}={}", k, v.is_string() ? v.get<std::string>() : ""));
  }
  for (const Json& r : ArrayRefAt(selector, {"matchExpressions"})) {
    std::string key = StringAt(r, "key"), op = StringAt(r, "operator");
    std::vector<std::string> values;
    for (const Json& v : ArrayRefAt(r, {"values"})) {
      if (v.is_string()) values.push_back(v.get<std::string>());
    }
    std::sort(values.begin(), values.end());
    if (op == "Exists") {
      parts.push_back(key);
    } else if (op == "DoesNotExist") {
      parts.push_back("!" + key);
    } else {
      parts.push_back(
          fmt::format("{} {} ({})", key, op == "In" ? "in" : "notin", fmt::join(values, ",")));
    }
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

DeploymentFields DeploymentFieldsOf(const CoreObject& deployment) {
  return internal::TypedFields<DeploymentFields>(Object(deployment));
}

ObjectHooks DeploymentHooks() {
  ObjectHooks hooks = internal::CoreHooks<DeploymentFields>("Deployment", DefaultDeployment,
                                                            ValidateDeployment, kAppsGroupVersion);
  // apps/v1: the pods a Deployment owns are the ones its selector picks,
  // for its whole life.
  hooks.validate_update = [](const Object& old_object, const Object& new_object,
                             FieldErrors& errors) {
    Json was = DeploymentFieldsOf(std::get<CoreObject>(old_object)).spec.selector;
    Json now = DeploymentFieldsOf(std::get<CoreObject>(new_object)).spec.selector;
    if (was != now) {
      errors.push_back(FieldError::InvalidRendered(FieldPath("spec").Child("selector"),
                                                   RenderValue(now), "field is immutable"));
    }
  };
  return hooks;
}

}  // namespace trainyard::api
