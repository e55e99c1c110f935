#include "api/job_metrics.h"

#include <fmt/format.h>

#include "api/well_known.h"
#include "common/strings.h"
#include "tune/metrics.h"

namespace trainyard::api {
namespace {

// A path in the output folder: relative, of plain names.
std::string PathProblem(std::string_view path) {
  if (path.starts_with('/')) return "want a path relative to the job's output folder";
  for (const std::string& part : SplitNonEmpty(path, '/')) {
    if (part == "." || part == "..") return "want a path within the job's output folder";
  }
  return "";
}

}  // namespace

JobMetricsSpec JobMetricsSpecOf(const std::map<std::string, std::string>& annotations,
                                FieldErrors* errors) {
  FieldPath at = FieldPath("metadata").Child("annotations");
  auto error = [&](std::string_view key, std::string_view value, std::string why) {
    if (errors != nullptr)
      errors->push_back(FieldError::Invalid(at.Key(key), value, std::move(why)));
  };
  JobMetricsSpec spec;
  auto it = annotations.find(std::string(kJobMetricsAnnotation));
  std::string value = it == annotations.end() ? "StdOut" : it->second;
  size_t colon = value.find(':');
  std::string kind = value.substr(0, colon);
  std::string path = colon == std::string::npos ? "" : value.substr(colon + 1);
  if (kind == "StdOut" || kind == "Push" || kind == "none") {
    spec.kind = kind == "StdOut" ? JobMetricsSpec::Kind::kStdOut
                : kind == "Push" ? JobMetricsSpec::Kind::kPush
                                 : JobMetricsSpec::Kind::kNone;
    if (colon != std::string::npos) error(kJobMetricsAnnotation, value, kind + " takes no path");
  } else if (kind == "File" || kind == "TensorFlowEvent") {
    spec.kind =
        kind == "File" ? JobMetricsSpec::Kind::kFile : JobMetricsSpec::Kind::kTensorFlowEvent;
    spec.path = path.empty() && kind == "File" ? "metrics.log" : path;
    if (std::string problem = PathProblem(path); !problem.empty()) {
      error(kJobMetricsAnnotation, value, problem);
    }
  } else {
    error(kJobMetricsAnnotation, value,
          "want StdOut, File[:<path>], TensorFlowEvent[:<dir>], Push or none (Katib's "
          "collectors; a path is in the job's output folder, $TRAINYARD_OUTPUT_DIR)");
  }
  auto filter = annotations.find(std::string(kJobMetricsFilterAnnotation));
  if (filter == annotations.end()) return spec;
  for (const std::string& line : SplitNonEmpty(filter->second, '\n')) {
    if (Status ok = tune::ValidateMetricFilter(line); !ok.ok()) {
      error(kJobMetricsFilterAnnotation, line, ok.message());
    }
    spec.filters.push_back(line);
  }
  if (spec.kind != JobMetricsSpec::Kind::kStdOut && spec.kind != JobMetricsSpec::Kind::kFile) {
    error(kJobMetricsFilterAnnotation, filter->second,
          "a filter is for the StdOut and File collectors alone");
  }
  return spec;
}

}  // namespace trainyard::api
