#include "tracking/trial_observations.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "api/json.h"
#include "api/object.h"
#include "tune/metrics.h"

namespace trainyard::tracking {
namespace {

// RFC 3339 with microseconds, as Katib's DB manager writes times.
std::string FormatMicros(int64_t time_us) {
  TimePoint t{std::chrono::duration_cast<Duration>(std::chrono::microseconds(time_us))};
  std::string seconds = FormatRfc3339(t);  // "...:SSZ"
  int64_t micros = ((time_us % 1'000'000) + 1'000'000) % 1'000'000;
  seconds.pop_back();
  return fmt::format("{}.{:06}Z", seconds, micros);
}

// A value as an error shows it: scalars as written, up to 64 bytes; an
// object or array by its type alone. An error never echoes a whole body.
std::string Abridged(const api::Json& value) {
  if (value.is_object()) return "an object";
  if (value.is_array()) return "an array";
  constexpr size_t kShown = 64;
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true);  // cut anywhere, still text
  if (text.size() > kShown) text = text.substr(0, kShown) + "...";
  return text;
}

// A pushed value: a number, or text that reads as one (Katib keeps text).
std::optional<std::string> MetricValue(const api::Json& value) {
  // Shortest text that reads back the same, as the JSON file collector writes.
  if (value.is_number()) return fmt::format("{}", value.get<double>());
  if (value.is_string() && tune::ParseMetricValue(value.get<std::string>())) {
    return value.get<std::string>();
  }
  return std::nullopt;
}

// One metric value; `name_path` and `value_path` say where in the body
// they were, for errors.
void AddRow(const FieldPath& name_path, const std::string& name, const FieldPath& value_path,
            const api::Json& value, std::optional<int64_t> time_us,
            std::vector<store::ObservationRow>& rows, FieldErrors& errors) {
  std::optional<std::string> text = MetricValue(value);
  if (name.empty()) {
    errors.push_back(FieldError::Required(name_path, "a metric needs a name"));
  } else if (!text) {
    errors.push_back(FieldError::InvalidRendered(value_path, Abridged(value),
                                                 "must be a number, or a string that is one"));
  } else {
    rows.push_back({.time_us = time_us.value_or(0), .metric = name, .value = std::move(*text)});
  }
}

// Katib's ObservationLog shape, as GET answers it:
//   {"metricLogs": [{"timeStamp": "...", "metric": {"name": "loss", "value": "0.1"}}]}
void ReadMetricLogs(const api::Json& logs, int64_t now_us, std::vector<store::ObservationRow>& rows,
                    FieldErrors& errors) {
  FieldPath path("metricLogs");
  if (!logs.is_array()) {
    errors.push_back(FieldError::Invalid(path, "", "must be a list of {timeStamp, metric}"));
    return;
  }
  for (size_t i = 0; i < logs.size(); ++i) {
    const api::Json& log = logs[i];
    FieldPath at = path.Index(i);
    const api::Json* metric = log.is_object() && log.contains("metric") ? &log["metric"] : nullptr;
    if (metric == nullptr || !metric->is_object()) {
      errors.push_back(FieldError::Required(at.Child("metric"), "{name, value}"));
      continue;
    }
    std::optional<int64_t> time_us = now_us;
    if (auto stamp = log.find("timeStamp"); stamp != log.end()) {
      time_us =
          stamp->is_string() ? tune::ParseRfc3339Micros(stamp->get<std::string>()) : std::nullopt;
      if (!time_us) {
        errors.push_back(FieldError::InvalidRendered(at.Child("timeStamp"), Abridged(*stamp),
                                                     "must be an RFC 3339 time"));
        continue;
      }
    }
    const api::Json& name = api::ValueAt(*metric, "name");
    if (!name.is_null() && !name.is_string()) {
      errors.push_back(FieldError::InvalidRendered(at.Child("metric").Child("name"), Abridged(name),
                                                   "must be a string"));
      continue;
    }
    AddRow(at.Child("metric").Child("name"), api::StringAt(*metric, "name"),
           at.Child("metric").Child("value"),
           metric->contains("value") ? (*metric)["value"] : api::Json(), time_us, rows, errors);
  }
}

}  // namespace

std::string FinishedAs(const api::Trial& trial) {
  for (const api::KatibCondition& c : trial.status.conditions) {
    if (c.status == "True" &&
        (c.type == "Succeeded" || c.type == "Failed" || c.type == "MetricsUnavailable" ||
         c.type == "EarlyStopped" || c.type == "Killed")) {
      return c.type;
    }
  }
  return "";
}

int64_t Micros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// The rows a push body holds, each stamped with its own time or `now_us`:
// Katib's ObservationLog shape, or {"metrics": {"loss": 0.1, ...}} as the
// Katib SDK's report_metrics takes them.
std::variant<std::vector<store::ObservationRow>, FieldErrors> PushedRows(const api::Json& body,
                                                                         int64_t now_us) {
  std::vector<store::ObservationRow> rows;
  FieldErrors errors;
  if (body.contains("metricLogs")) {
    ReadMetricLogs(body["metricLogs"], now_us, rows, errors);
  } else if (body.contains("metrics") && body["metrics"].is_object()) {
    for (const auto& [name, value] : body["metrics"].items()) {
      FieldPath path = FieldPath("metrics").Key(name);
      AddRow(path, name, path, value, now_us, rows, errors);
    }
  } else {
    errors.push_back(FieldError::Required(
        FieldPath("metrics"),
        "send {\"metrics\": {\"<name>\": <value>, ...}} or {\"metricLogs\": "
        "[{\"timeStamp\": ..., \"metric\": {\"name\": ..., \"value\": ...}}]}"));
  }
  if (errors.empty() && rows.empty()) {
    errors.push_back(FieldError::Required(FieldPath("metrics"), "no metric values were sent"));
  }
  if (!errors.empty()) return errors;
  return rows;
}

Result<api::Trial> StoredTrial(const api::Json& doc) {
  api::DecodeResult decoded = api::DecodeObject(doc);
  const auto* trial = decoded.object ? std::get_if<api::Trial>(&*decoded.object) : nullptr;
  if (trial == nullptr) return InternalError("a stored trial does not decode");
  return *trial;
}

api::Json ObservationLogDocument(const std::string& namespace_, const std::string& trial,
                                 const std::vector<store::ObservationRow>& rows,
                                 const store::ObservationSummary* summary) {
  std::set<std::string> thinned;
  if (summary != nullptr) {
    for (const store::ObservationSeries& s : summary->series) {
      if (s.stride > 1) thinned.insert(s.metric);
    }
  }
  api::Json logs = api::Json::array();
  for (const store::ObservationRow& row : rows) {
    api::Json log = {{"timeStamp", FormatMicros(row.time_us)},
                     {"metric", {{"name", row.metric}, {"value", row.value}}}};
    // Beyond Katib's shape: the step it was logged at (MLflow's, an event
    // file's), when it has one.
    if (row.step != store::kNoStep) log["step"] = row.step;
    // Where values were thinned, a value's place among its metric's
    // values is no longer its place in this list: it is said.
    if (row.step == store::kNoStep && thinned.contains(row.metric)) log["index"] = row.index;
    logs.push_back(std::move(log));
  }
  api::Json doc = {{"apiVersion", "kubeflow.org/v1beta1"},
                   {"kind", "ObservationLog"},
                   {"metadata", {{"name", trial}, {"namespace", namespace_}}},
                   {"metricLogs", std::move(logs)}};
  if (summary == nullptr) return doc;
  for (const store::ObservationSeries& s : summary->series) {
    if (s.stride <= 1) continue;
    doc["thinned"].push_back({{"name", s.metric},
                              {"values", s.count},
                              {"kept", fmt::format("1 in {}", s.stride)},
                              {"min", s.min},
                              {"max", s.max}});
  }
  if (summary->dropped > 0) doc["droppedValues"] = summary->dropped;
  return doc;
}

bool IsTrialsToken(const api::Json& trial, const std::string& token) {
  std::string uid = api::StringAt(trial, {"metadata", "uid"});
  // Compared whole, so that the time taken says nothing of a near guess.
  unsigned char diff = uid.empty() || token.size() != uid.size() ? 1 : 0;
  for (size_t i = 0; i < token.size() && i < uid.size(); ++i) diff |= token[i] ^ uid[i];
  return diff == 0;
}

api::Json PushedStatus(size_t rows, const std::string& trial) {
  return {{"apiVersion", "v1"},
          {"kind", "Status"},
          {"status", "Success"},
          {"message", fmt::format("recorded {} metric value{} for trial {}", rows,
                                  rows == 1 ? "" : "s", trial)},
          {"code", 200}};
}

}  // namespace trainyard::tracking
