#include "api/job_metrics.h"

#include <fmt/format.h>

#include "api/well_known.h"
#include "common/artifact_files.h"
#include "common/strings.h"
#include "tune/metrics.h"

namespace trainyard::api {
namespace {

// Katib sets no bounds on filters; these keep one job's from costing the
// collector more than its output does.
constexpr size_t kMaxFilters = 16;
constexpr size_t kMaxFilterBytes = 1024;

// A path in the output folder: relative, of plain names.
std::string PathProblem(const std::string& path) {
  if (path.starts_with('/')) return "want a path relative to the job's output folder";
  if (!CheckArtifactPath(path).ok()) {
    return "want a path within the job's output folder, of plain names";
  }
  return "";
}

JobMetricsSpec::Kind KindOf(const std::string& word) {
  if (word == "StdOut") return JobMetricsSpec::Kind::kStdOut;
  if (word == "Push") return JobMetricsSpec::Kind::kPush;
  if (word == "File") return JobMetricsSpec::Kind::kFile;
  if (word == "TensorFlowEvent") return JobMetricsSpec::Kind::kTensorFlowEvent;
  return JobMetricsSpec::Kind::kNone;  // none, Katib's None, and what is refused
}

}  // namespace

JobMetricsSpec JobMetricsSpecOf(const std::map<std::string, std::string>& annotations,
                                FieldErrors* errors) {
  FieldPath at = FieldPath("metadata").Child("annotations");
  auto error = [&](std::string_view key, std::string_view value, std::string why) {
    if (errors != nullptr) {
      errors->push_back(FieldError::Invalid(at.Key(key), value, std::move(why)));
    }
  };
  JobMetricsSpec spec;
  auto it = annotations.find(std::string(kJobMetricsAnnotation));
  std::string value = it == annotations.end() ? "StdOut" : it->second;
  size_t colon = value.find(':');
  std::string word = value.substr(0, colon);
  // Blanks around a path are YAML's, not the file's: "File: m.log".
  std::string path = colon == std::string::npos ? "" : std::string(Trim(value.substr(colon + 1)));
  if (path.size() > 1 && path.ends_with('/')) path.pop_back();  // "runs/" is "runs"
  spec.kind = KindOf(word);
  bool known = word == "StdOut" || word == "Push" || word == "none" || word == "None" ||
               word == "File" || word == "TensorFlowEvent";
  bool takes_path = word == "File" || word == "TensorFlowEvent";
  if (!known) {
    error(kJobMetricsAnnotation, value,
          "want StdOut, File[:<path>], TensorFlowEvent[:<dir>], Push or none (Katib's "
          "collectors; a path is in the job's output folder, $TRAINYARD_OUTPUT_DIR)");
  } else if (!takes_path && colon != std::string::npos) {
    error(kJobMetricsAnnotation, value, word + " takes no path");
  } else if (!path.empty()) {
    if (std::string problem = PathProblem(path); !problem.empty()) {
      error(kJobMetricsAnnotation, value, problem);
    }
  }
  spec.path = path.empty() && spec.kind == JobMetricsSpec::Kind::kFile ? "metrics.log" : path;
  auto filter = annotations.find(std::string(kJobMetricsFilterAnnotation));
  if (filter == annotations.end()) return spec;
  for (const std::string& line : SplitNonEmpty(filter->second, '\n')) {
    if (spec.filters.size() == kMaxFilters || line.size() > kMaxFilterBytes) {
      error(kJobMetricsFilterAnnotation, "",
            fmt::format("at most {} filters, of {} bytes each", kMaxFilters, kMaxFilterBytes));
      break;
    }
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
