#include "api/crd.h"

#include <fmt/format.h>

#include "api/object.h"
#include "api/optimization_job.h"
#include "api/printer_columns.h"
#include "api/reflect.h"
#include "api/trainer.h"
#include "api/training_job.h"
#include "common/strings.h"

namespace trainyard::api {
namespace {

Json SchemaOf(const std::string&) { return {{"type", "string"}}; }
Json SchemaOf(bool) { return {{"type", "boolean"}}; }
Json SchemaOf(int32_t) { return {{"type", "integer"}, {"format", "int32"}}; }
Json SchemaOf(int64_t) { return {{"type", "integer"}, {"format", "int64"}}; }
Json SchemaOf(const Quantity&) {
  return {{"anyOf", {{{"type", "integer"}}, {{"type", "string"}}}},
          {"x-kubernetes-int-or-string", true}};
}
// A raw field holds whatever it is given.
Json SchemaOf(const Json&) { return {{"x-kubernetes-preserve-unknown-fields", true}}; }

template <class T>
Json SchemaOf(const std::optional<T>&);
template <class T>
Json SchemaOf(const std::vector<T>&);
template <class T>
Json SchemaOf(const std::map<std::string, T>&);
template <Reflected T>
Json SchemaOf(const T&);

template <class T>
Json SchemaOf(const std::optional<T>&) {
  return SchemaOf(T{});
}

template <class T>
Json SchemaOf(const std::vector<T>&) {
  return {{"type", "array"}, {"items", SchemaOf(T{})}};
}

template <class T>
Json SchemaOf(const std::map<std::string, T>&) {
  return {{"type", "object"}, {"additionalProperties", SchemaOf(T{})}};
}

// An object's properties from a field-list function.
template <class FieldsFn>
Json ObjectSchema(FieldsFn&& fields, bool keeps_unknown) {
  Json properties = Json::object();
  auto visitor = [&](const char* key, const auto& field) { properties[key] = SchemaOf(field); };
  fields(visitor);
  Json schema = {{"type", "object"}};
  // kube-apiserver drops an empty `properties` from what it stores: one
  // written would make every `kubectl apply` of the CRD a change.
  if (!properties.empty()) schema["properties"] = std::move(properties);
  if (keeps_unknown) schema["x-kubernetes-preserve-unknown-fields"] = true;
  return schema;
}

template <Reflected T>
Json SchemaOf(const T&) {
  [[maybe_unused]] static const T sample{};  // GCC: a type without fields reads none
  return ObjectSchema([](auto& v) { T::Fields(sample, v); }, KeepsUnknownFields<T>);
}

// kubectl's columns for the job kinds, as upstream's CRDs declare them.
Json PrinterColumns() {
  return {{{"jsonPath", ".status.conditions[-1:].type"}, {"name", "State"}, {"type", "string"}},
          {{"jsonPath", ".metadata.creationTimestamp"}, {"name", "Age"}, {"type", "date"}}};
}

// The scale subresource upstream gives the kinds that scale by Workers.
std::optional<Json> ScaleOf(JobKind kind) {
  if (!InfoFor(kind).scales_by_workers) return std::nullopt;
  return Json{
      {"labelSelectorPath", ".status.replicaStatuses.Worker.selector"},
      {"specReplicasPath", fmt::format(".spec.{}.Worker.replicas", InfoFor(kind).replica_field)},
      {"statusReplicasPath", ".status.replicaStatuses.Worker.active"}};
}

}  // namespace

Json JobOpenApiSchema(JobKind kind) {
  static const TrainingJobSpec spec{};
  Json spec_schema =
      ObjectSchema([kind](auto& v) { TrainingJobSpec::Fields(spec, v, kind); }, false);
  spec_schema["required"] = {std::string(InfoFor(kind).replica_field)};
  return {{"type", "object"},
          {"properties",
           {{"apiVersion", {{"type", "string"}}},
            {"kind", {{"type", "string"}}},
            // The API server's own: a CRD may say no more of it.
            {"metadata", {{"type", "object"}}},
            {"spec", std::move(spec_schema)},
            {"status", SchemaOf(JobStatus{})}}}};
}

Json JobCustomResourceDefinition(JobKind kind) {
  const KindInfo& info = InfoFor(kind);
  std::string kind_name(info.name);
  std::string plural(info.plural);
  Json subresources = {{"status", Json::object()}};
  if (std::optional<Json> scale = ScaleOf(kind)) subresources["scale"] = *scale;
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata",
           {{"name", plural + ".kubeflow.org"},
            {"labels", {{"app.kubernetes.io/part-of", "trainyard"}}}}},
          {"spec",
           {{"group", "kubeflow.org"},
            {"names",
             {{"kind", kind_name},
              {"listKind", kind_name + "List"},
              {"plural", plural},
              {"singular", AsciiLower(kind_name)}}},
            {"scope", "Namespaced"},
            {"versions",
             {{{"name", "v1"},
               {"served", true},
               {"storage", true},
               {"additionalPrinterColumns", PrinterColumns()},
               {"schema", {{"openAPIV3Schema", JobOpenApiSchema(kind)}}},
               {"subresources", subresources}}}}}}};
}

Json KatibCustomResourceDefinition(const std::string& kind) {
  std::string singular = AsciiLower(kind);
  Json columns = {
      {{"name", "Type"}, {"type", "string"}, {"jsonPath", ".status.conditions[-1:].type"}},
      {{"name", "Status"}, {"type", "string"}, {"jsonPath", ".status.conditions[-1:].status"}}};
  if (kind == "Suggestion") {
    columns.push_back({{"name", "Requested"}, {"type", "string"}, {"jsonPath", ".spec.requests"}});
    columns.push_back(
        {{"name", "Assigned"}, {"type", "string"}, {"jsonPath", ".status.suggestionCount"}});
  }
  columns.push_back(
      {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}});
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata",
           {{"name", singular + "s.kubeflow.org"},
            {"labels", {{"app.kubernetes.io/part-of", "trainyard"}}}}},
          {"spec",
           {{"group", "kubeflow.org"},
            {"names",
             {{"kind", kind},
              {"listKind", kind + "List"},
              {"plural", singular + "s"},
              {"singular", singular},
              {"categories", {"all", "kubeflow", "katib"}}}},
            {"scope", "Namespaced"},
            {"versions",
             {{{"name", "v1beta1"},
               {"served", true},
               {"storage", true},
               {"additionalPrinterColumns", std::move(columns)},
               {"schema",
                {{"openAPIV3Schema",
                  {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}},
               {"subresources", {{"status", Json::object()}}}}}}}}};
}

namespace {

// OptimizationJob's columns, the same as trainyard's API server shows.
Json OptimizationJobPrinterColumns() {
  Json columns = Json::array();
  for (const auto& [name, path] : OptimizationJobColumnPaths()) {
    columns.push_back({{"jsonPath", path},
                       {"name", name},
                       {"type", name == "State" || name == "Best" ? "string" : "integer"}});
  }
  columns.push_back(
      {{"jsonPath", ".metadata.creationTimestamp"}, {"name", "Age"}, {"type", "date"}});
  return columns;
}

// TrainJob's: upstream's, with what its trainer reports (KEP-2779's
// proposed PROGRESS column; trainyard's API server shows the same as "42%"
// and "2m", which a CRD column, a JSON path, cannot).
Json TrainJobPrinterColumns() {
  Json columns = PrinterColumns();
  columns.insert(columns.end() - 1,
                 {{{"jsonPath", ".status.trainerStatus.progressPercentage"},
                   {"name", "Progress %"},
                   {"type", "integer"}},
                  {{"jsonPath", ".status.trainerStatus.estimatedRemainingSeconds"},
                   {"name", "ETA Seconds"},
                   {"type", "integer"}}});
  return columns;
}

// The schemas of a Trainer kind's spec and status (null: it has none),
// and its printer columns.
struct TrainerSchema {
  Json spec;
  Json status;
  Json columns;
};

TrainerSchema TrainerSchemaOf(const std::string& kind) {
  if (kind == "TrainJob") {
    Json spec = SchemaOf(TrainJobSpec{});
    // As upstream's CRD: without these there is nothing to run.
    spec["required"] = {"runtimeRef"};
    spec["properties"]["runtimeRef"]["required"] = {"name"};
    return {std::move(spec), SchemaOf(TrainJobStatus{}), TrainJobPrinterColumns()};
  }
  if (kind == "OptimizationJob") {
    // A superset of upstream's: its extensions (several objectives,
    // searchAlgorithm.trainyard) are checked by trainyard's webhook.
    Json spec = SchemaOf(OptimizationJobSpec{});
    spec["required"] = {"objectives", "parameters", "trainJobTemplate"};
    return {std::move(spec), SchemaOf(OptimizationJobStatus{}), OptimizationJobPrinterColumns()};
  }
  return {SchemaOf(TrainingRuntimeSpec{}), Json(), Json()};
}

}  // namespace

Json TrainerCustomResourceDefinition(const std::string& kind) {
  std::string plural = AsciiLower(kind) + "s";
  TrainerSchema schema = TrainerSchemaOf(kind);
  bool has_status = !schema.status.is_null();
  Json properties = {{"apiVersion", {{"type", "string"}}},
                     {"kind", {{"type", "string"}}},
                     {"metadata", {{"type", "object"}}},
                     {"spec", std::move(schema.spec)}};
  if (has_status) properties["status"] = std::move(schema.status);
  Json version = {
      {"name", "v1alpha1"},
      {"served", true},
      {"storage", true},
      {"schema", {{"openAPIV3Schema", {{"type", "object"}, {"properties", properties}}}}}};
  if (has_status) {
    version["additionalPrinterColumns"] = std::move(schema.columns);
    version["subresources"] = {{"status", Json::object()}};
  }
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata",
           {{"name", plural + "." + std::string(kTrainerGroup)},
            {"labels", {{"app.kubernetes.io/part-of", "trainyard"}}}}},
          {"spec",
           {{"group", std::string(kTrainerGroup)},
            {"names",
             {{"kind", kind},
              {"listKind", kind + "List"},
              {"plural", plural},
              {"singular", AsciiLower(kind)}}},
            {"scope", IsNamespacedKind(kind) ? "Namespaced" : "Cluster"},
            {"versions", Json::array({std::move(version)})}}}};
}

}  // namespace trainyard::api
