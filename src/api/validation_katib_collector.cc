// A Katib Experiment's metricsCollectorSpec: upstream's webhook rules and
// messages, metric filters compiled as the collector will, and the kinds
// trainyard collects from.
#include <fmt/format.h>

#include "api/validation_internal.h"
#include "tune/metrics.h"

namespace trainyard::api::internal {
namespace {

const FieldPath kCollectorSpec = FieldPath("spec").Child("metricsCollectorSpec");

void ValidateFilters(const MetricsSource& source, ValidationResult& out) {
  if (!source.filter) return;
  FieldPath path = kCollectorSpec.Child("source").Child("filter").Child("metricsFormat");
  for (size_t i = 0; i < source.filter->metrics_format.size(); ++i) {
    const std::string& filter = source.filter->metrics_format[i];
    Status status = tune::ValidateMetricFilter(filter);
    if (!status.ok()) Error(out, FieldError::Invalid(path.Index(i), filter, status.message()));
  }
}

void ValidateFileSource(const MetricsSource& source, ValidationResult& out) {
  FieldPath path = kCollectorSpec.Child("source");
  const FileSystemPath* file = source.file_system_path ? &*source.file_system_path : nullptr;
  if (file == nullptr || file->kind != "File" || !file->path.starts_with("/")) {
    Error(out, FieldError::Required(path.Child("fileSystemPath"),
                                    "file path where metrics file exists is required"));
    return;
  }
  if (file->format != "TEXT" && file->format != "JSON") {
    Error(out, FieldError::Invalid(path.Child("fileSystemPath").Child("format"), file->format,
                                   "format of metrics file is required for metrics collector"));
  }
  if (file->format == "JSON" && source.filter) {
    Error(out, FieldError::Invalid(path.Child("filter"), "",
                                   "filter must be nil when format of metrics file is json"));
  }
}

void ValidateTfEventSource(const MetricsSource& source, ValidationResult& out) {
  FieldPath path = kCollectorSpec.Child("source");
  const FileSystemPath* dir = source.file_system_path ? &*source.file_system_path : nullptr;
  if (dir == nullptr || dir->kind != "Directory" || !dir->path.starts_with("/")) {
    Error(out, FieldError::Required(path,
                                    "directory path where tensorflow event files exist is "
                                    "required by "
                                    ".spec.metricsCollectorSpec.source.fileSystemPath.path"));
  }
  if (dir != nullptr && !dir->format.empty()) {
    Error(out, FieldError::Invalid(path.Child("fileSystemPath").Child("format"), dir->format,
                                   "must be empty"));
  }
}

// Kinds upstream defines that trainyard does not collect from: refused,
// with why and what to use instead, rather than accepted and left without
// metrics.
void RefuseUnsupported(std::string_view kind, ValidationResult& out) {
  std::string_view why =
      kind == "Custom"
          ? "a custom collector is a sidecar container that reports to Katib's DB manager over "
            "gRPC, and trainyard runs neither sidecars nor that service"
          : "Katib configures no collector for it either";
  Error(out, FieldError::Invalid(kCollectorSpec.Child("collector").Child("kind"), kind,
                                 fmt::format("trainyard does not collect metrics of kind {} ({}); "
                                             "use StdOut, File, TensorFlowEvent or Push",
                                             kind, why)));
}

}  // namespace

void ValidateMetricsCollector(const ExperimentSpec& spec, ValidationResult& out) {
  if (!spec.metrics_collector_spec || !spec.metrics_collector_spec->collector) return;
  const MetricsCollectorSpec& mc = *spec.metrics_collector_spec;
  const std::string& kind = mc.collector->kind;
  MetricsSource source = mc.source.value_or(MetricsSource{});
  ValidateFilters(source, out);
  if (kind == "StdOut" || kind == "Push") return;
  if (kind == "File") {
    ValidateFileSource(source, out);
  } else if (kind == "TensorFlowEvent") {
    ValidateTfEventSource(source, out);
  } else if (kind == "PrometheusMetric" || kind == "Custom") {
    RefuseUnsupported(kind, out);
  } else {
    std::string detail = fmt::format("invalid metrics collector kind: {}", kind);
    if (kind == "None") detail += " (Katib v0.18 renamed None to Push)";
    Error(out, FieldError::Invalid(kCollectorSpec.Child("collector").Child("kind"), kind, detail));
  }
}

}  // namespace trainyard::api::internal
