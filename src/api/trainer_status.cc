#include "api/trainer_status.h"

#include <fmt/format.h>

#include <cstdint>

#include "api/reflect.h"
#include "common/clock.h"

namespace trainyard::api {
namespace {

// An int32 in [min, max] at `key`, copied into `out`.
void CheckInt(const Json& pushed, const char* key, int64_t max, const FieldPath& path, Json& out,
              FieldErrors& errors) {
  const Json* value = FindAt(pushed, {key});
  if (value == nullptr || value->is_null()) return;
  if (!value->is_number_integer()) {
    errors.push_back(TypeError(path.Child(key), *value, "an integer"));
    return;
  }
  if (value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(max)) {
    errors.push_back(FieldError::InvalidRendered(
        path.Child(key), value->dump(), fmt::format("should be less than or equal to {}", max)));
    return;
  }
  int64_t v = value->get<int64_t>();
  if (v < 0 || v > max) {
    errors.push_back(
        FieldError::Invalid(path.Child(key), v,
                            v < 0 ? "should be greater than or equal to 0"
                                  : fmt::format("should be less than or equal to {}", max)));
    return;
  }
  out[key] = v;
}

void CheckMetrics(const Json& pushed, const FieldPath& path, Json& out, FieldErrors& errors) {
  const Json* metrics = FindAt(pushed, {"metrics"});
  if (metrics == nullptr || metrics->is_null()) return;
  if (!metrics->is_array()) {
    errors.push_back(TypeError(path.Child("metrics"), *metrics, "a list of {name, value}"));
    return;
  }
  if (metrics->size() > kMaxTrainerMetrics) {
    errors.push_back(
        FieldError::InvalidRendered(path.Child("metrics"), std::to_string(metrics->size()),
                                    fmt::format("must have at most {} items", kMaxTrainerMetrics)));
    return;
  }
  Json kept = Json::array();
  for (size_t i = 0; i < metrics->size(); ++i) {
    FieldPath at = path.Child("metrics").Index(static_cast<int64_t>(i));
    Json metric = Json::object();
    for (const char* key : {"name", "value"}) {
      const Json* text = FindAt((*metrics)[i], {key});
      if (text == nullptr || !text->is_string() || text->get<std::string>().empty()) {
        errors.push_back(text == nullptr || text->is_null()
                             ? FieldError::Required(at.Child(key))
                             : TypeError(at.Child(key), *text, "a string of 1 to 64 characters"));
        continue;
      }
      if (text->get<std::string>().size() > kMaxTrainerMetricText) {
        errors.push_back(FieldError::TooLong(at.Child(key), kMaxTrainerMetricText));
        continue;
      }
      metric[key] = *text;
    }
    kept.push_back(std::move(metric));
  }
  out["metrics"] = std::move(kept);
}

}  // namespace

Json CheckedTrainerStatus(const Json& pushed, const FieldPath& path, FieldErrors& errors) {
  Json out = Json::object();
  if (!pushed.is_object()) {
    errors.push_back(TypeError(path, pushed, "an object"));
    return out;
  }
  CheckInt(pushed, "progressPercentage", 100, path, out, errors);
  CheckInt(pushed, "estimatedRemainingSeconds", INT32_MAX, path, out, errors);
  CheckMetrics(pushed, path, out, errors);
  // Upstream's CEL rule: a report says when it was made.
  const Json* when = FindAt(pushed, {"lastUpdatedTime"});
  if (when == nullptr || when->is_null()) {
    errors.push_back(FieldError::InvalidRendered(path, "\"object\"",
                                                 "lastUpdatedTime is required when trainerStatus "
                                                 "is present"));
  } else if (std::optional<TimePoint> at =
                 when->is_string() ? ParseRfc3339Offset(when->get<std::string>()) : std::nullopt;
             !at) {
    errors.push_back(TypeError(path.Child("lastUpdatedTime"), *when, "an RFC 3339 date-time"));
  } else {
    // As metav1.Time keeps it: to the second, in UTC (the SDK sends
    // Python's isoformat(), "2026-01-23T10:30:45.123456+00:00").
    out["lastUpdatedTime"] = FormatRfc3339(*at);
  }
  return out;
}

std::string TrainerStatusPath(std::string_view namespace_, std::string_view name) {
  return "/apis/" + TrainerStatusAudience(namespace_, name);
}

std::string TrainerStatusAudience(std::string_view namespace_, std::string_view name) {
  return fmt::format("trainer.kubeflow.org/v1alpha1/namespaces/{}/trainjobs/{}/status", namespace_,
                     name);
}

}  // namespace trainyard::api
