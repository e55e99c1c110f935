#include "engine/metrics_collector.h"

#include <fmt/format.h>

#include <fstream>

#include "api/object.h"
#include "api/pod_object.h"
#include "controller/katib_status.h"
#include "controller/trial_reconciler.h"

namespace trainyard::engine {
namespace {

// At most this much is read per trial per step, so one chatty trial cannot
// stall the loop; the rest is read on the next steps.
constexpr int64_t kMaxReadBytes = 4 << 20;

std::string CollectorKind(const api::Trial& trial) {
  const auto& mc = trial.spec.metrics_collector;
  return mc && mc->collector ? mc->collector->kind : "StdOut";
}

bool MatchesLabels(const api::Json& pod, const std::map<std::string, std::string>& wanted) {
  const api::Json& labels = pod["metadata"].value("labels", api::Json::object());
  for (const auto& [key, value] : wanted) {
    auto it = labels.find(key);
    if (it == labels.end() || *it != value) return false;
  }
  return true;
}

// The trial's primary pods: those of its job that match primaryPodLabels.
Result<std::vector<std::string>> PrimaryPods(const store::ObjectStore& store,
                                             const api::Trial& trial) {
  std::vector<std::string> pods;
  RETURN_IF_ERROR(store.Scan("Pod", trial.metadata.namespace_, [&](const api::Json& pod) {
    const api::Json& labels = pod["metadata"].value("labels", api::Json::object());
    auto owner = labels.find(std::string(api::kTrialLabel));
    if (owner == labels.end() || *owner != trial.metadata.name) return;
    if (MatchesLabels(pod, trial.spec.primary_pod_labels)) {
      pods.push_back(pod["metadata"].value("name", ""));
    }
  }));
  return pods;
}

std::vector<std::string> MetricNames(const api::Trial& trial) {
  const api::ObjectiveSpec objective = trial.spec.objective.value_or(api::ObjectiveSpec{});
  std::vector<std::string> names = {objective.objective_metric_name};
  names.insert(names.end(), objective.additional_metric_names.begin(),
               objective.additional_metric_names.end());
  return names;
}

int64_t Micros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

Result<const tune::MetricsParser*> MetricsCollector::ParserFor(const api::Trial& trial) {
  auto it = parsers_.find(trial.metadata.uid);
  if (it != parsers_.end()) return it->second.get();
  const api::MetricsCollectorSpec mc =
      trial.spec.metrics_collector.value_or(api::MetricsCollectorSpec{});
  std::vector<std::string> filters;
  tune::MetricsFormat format = tune::MetricsFormat::kText;
  if (mc.source) {
    if (mc.source->filter) filters = mc.source->filter->metrics_format;
    if (mc.source->file_system_path && mc.source->file_system_path->format == "JSON") {
      format = tune::MetricsFormat::kJson;
    }
  }
  ASSIGN_OR_RETURN(tune::MetricsParser parser,
                   tune::MetricsParser::Make(MetricNames(trial), std::move(filters), format));
  auto [entry, inserted] = parsers_.emplace(
      trial.metadata.uid, std::make_unique<tune::MetricsParser>(std::move(parser)));
  return entry->second.get();
}

Status MetricsCollector::ReadSource(const api::Trial& trial, const tune::MetricsParser& parser,
                                    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return OkStatus();  // nothing written yet
  in.seekg(0, std::ios::end);
  int64_t size = in.tellg();
  ASSIGN_OR_RETURN(int64_t offset, options_.store->ObservationsReadTo(path));
  if (size < offset) offset = 0;  // the file was replaced: read it again
  if (size == offset) return OkStatus();
  int64_t length = std::min(size - offset, kMaxReadBytes);
  std::string text(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(text.data(), length);
  // Only whole lines: a line still being written is read next time.
  size_t end = text.rfind('\n');
  if (end == std::string::npos) return OkStatus();
  text.resize(end + 1);
  std::vector<store::ObservationRow> rows;
  int64_t now = Micros(options_.clock->Now());
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    std::string_view line(text.data() + start, newline - start);
    for (tune::MetricSample& sample : parser.ParseLine(line)) {
      rows.push_back({.time_us = sample.timestamp_us.value_or(now),
                      .metric = std::move(sample.name),
                      .value = std::move(sample.value)});
    }
    start = newline + 1;
  }
  std::string trial_id = trial.metadata.namespace_ + "/" + trial.metadata.name;
  return options_.store->AppendObservations(trial_id, rows, path,
                                            offset + static_cast<int64_t>(text.size()));
}

Status MetricsCollector::Collect(const store::ObjectKey& key) {
  Result<api::Json> stored = options_.store->Get(key);
  if (!stored.ok()) return OkStatus();  // the trial controller handles a deleted trial
  api::DecodeResult decoded = api::DecodeObject(*stored);
  auto* trial = decoded.object ? std::get_if<api::Trial>(&*decoded.object) : nullptr;
  if (trial == nullptr) return OkStatus();
  if (controller::IsFinished(controller::PhaseOf(*trial))) {
    parsers_.erase(trial->metadata.uid);
    return OkStatus();
  }
  std::string kind = CollectorKind(*trial);
  if (kind != "StdOut" && kind != "File") return OkStatus();
  ASSIGN_OR_RETURN(const tune::MetricsParser* parser, ParserFor(*trial));
  if (kind == "File") {
    controller::MetricsFile file = controller::MetricsFileOf(*trial, options_.metrics_dir);
    return ReadSource(*trial, *parser, file.host_path);
  }
  ASSIGN_OR_RETURN(std::vector<std::string> pods, PrimaryPods(*options_.store, *trial));
  for (const std::string& pod : pods) {
    RETURN_IF_ERROR(ReadSource(*trial, *parser,
                               options_.node->LogPath(trial->metadata.namespace_, pod,
                                                      trial->spec.primary_container_name)));
  }
  return OkStatus();
}

}  // namespace trainyard::engine
