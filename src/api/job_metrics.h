// How a job's own metrics are collected, as its annotations choose:
//
//   trainyard.dev/metrics: StdOut                  (the default) its main replica's output
//   trainyard.dev/metrics: File[:<path>]           a file in its output folder ("metrics.log")
//   trainyard.dev/metrics: TensorFlowEvent[:<dir>] event files in its output folder (all of it)
//   trainyard.dev/metrics: Push                    none read: its code pushes (MLflow, or POST
//   observations) trainyard.dev/metrics: none                    none at all
//   trainyard.dev/metrics-filter: <regex>          StdOut's and File's filters, one a line
//                                                  (Katib's metricsFormat; default name=value)
//
// Katib's collectors, chosen per job: a path is relative to the job's
// output folder (api::kOutputDirEnv), where a trial's is a path in its
// container that Katib shares with a sidecar.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/field_path.h"

namespace trainyard::api {

inline constexpr std::string_view kJobMetricsFilterAnnotation = "trainyard.dev/metrics-filter";

struct JobMetricsSpec {
  enum class Kind { kStdOut, kFile, kTensorFlowEvent, kPush, kNone };
  Kind kind = Kind::kStdOut;
  // File: the file; TensorFlowEvent: the directory ("" the whole folder).
  std::string path;
  std::vector<std::string> filters;  // empty: Katib's default
};

// The spec the annotations give, and the errors (at `metadata`'s path)
// that make them unusable.
JobMetricsSpec JobMetricsSpecOf(const std::map<std::string, std::string>& annotations,
                                FieldErrors* errors = nullptr);

}  // namespace trainyard::api
