#include "engine/metrics_collector.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <limits>

#include "api/job_metrics.h"
#include "api/json.h"
#include "api/kinds.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "api/trainer_status.h"
#include "api/well_known.h"
#include "common/strings.h"
#include "controller/katib_status.h"
#include "controller/reconcile_steps.h"
#include "controller/trial_reconciler.h"
#include "engine/primary_pods.h"
#include "tune/tfevents.h"

namespace trainyard::engine {
namespace {

// At most this much is read per trial per step, so one chatty trial cannot
// stall the loop; the rest is read on the next steps.
constexpr int64_t kMaxReadBytes = 4 << 20;
// How far one collection looks for the end of a line too long to read.
constexpr int64_t kMaxSkipBytes = int64_t{256} << 20;

// Where the line that goes on at `from` in `file` ends (just past its
// newline), looking at most kMaxSkipBytes ahead; where the look stopped
// when it found none.
int64_t PastLongLine(const OpenedArtifact& file, int64_t from) {
  int64_t end = std::min(file.size, from + kMaxSkipBytes);
  while (from < end) {
    std::string window = ReadAt(file, from, std::min(kMaxReadBytes, end - from));
    if (window.empty()) break;
    size_t newline = window.find('\n');
    if (newline != std::string::npos) return from + static_cast<int64_t>(newline) + 1;
    from += static_cast<int64_t>(window.size());
  }
  return from;
}

int64_t Micros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

std::string TrialLogId(const api::Trial& trial) {
  return trial.metadata.namespace_ + "/" + trial.metadata.name;
}

}  // namespace

Result<tune::MetricsParser> MakeMetricsParser(const api::Trial& trial) {
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
  return tune::MetricsParser::Make(api::MetricNamesOf(trial), std::move(filters), format);
}

Result<const tune::MetricsParser*> MetricsCollector::ParserFor(const api::Trial& trial) {
  auto it = parsers_.find(trial.metadata.uid);
  if (it != parsers_.end()) return it->second.get();
  ASSIGN_OR_RETURN(tune::MetricsParser parser, MakeMetricsParser(trial));
  auto [entry, inserted] = parsers_.emplace(
      trial.metadata.uid, std::make_unique<tune::MetricsParser>(std::move(parser)));
  return entry->second.get();
}

Status MetricsCollector::ReadSource(const std::string& log_id, const tune::MetricsParser& parser,
                                    const std::string& path, const std::string& source,
                                    JobRead* job) {
  // A replica may have put a link or a FIFO where its metrics file goes:
  // neither is followed nor opened (a FIFO would hold the loop).
  Result<OpenedArtifact> file = OpenRegularFile(path);
  if (!file.ok()) return OkStatus();  // nothing written yet
  return ReadOpened(*file, log_id, parser, source, job);
}

Status MetricsCollector::ReadOpened(const OpenedArtifact& file, const std::string& log_id,
                                    const tune::MetricsParser& parser, const std::string& source,
                                    JobRead* job) {
  int64_t size = file.size;
  ASSIGN_OR_RETURN(int64_t offset, options_.store->ObservationsReadTo(source));
  if (size < offset) offset = 0;  // the file was replaced: read it again
  if (size == offset) return OkStatus();
  int64_t cap = job != nullptr ? std::min(kMaxReadBytes, job->budget) : kMaxReadBytes;
  if (cap <= 0) {
    job->pending = true;
    return OkStatus();
  }
  std::string text = ReadAt(file, offset, std::min(size - offset, cap));
  int64_t length = static_cast<int64_t>(text.size());
  int64_t got = length;
  if (job != nullptr) {
    job->budget -= got;
    if (offset + got < size) job->pending = true;
  }
  // Only whole lines: a line still being written is read next time; once
  // its job has ended, nothing more will be written, and the last line
  // counts without its newline. A whole window without one (a progress
  // bar's \r, binary output) is passed over rather than read again for
  // ever.
  bool ended_line = false;
  if (job != nullptr && job->final && offset + length == size && !text.empty() &&
      text.back() != '\n') {
    text.push_back('\n');
    ended_line = true;
  }
  size_t end = text.rfind('\n');
  if (end == std::string::npos && length == kMaxReadBytes) {
    // A line longer than any read holds no metric line Katib would take:
    // it is passed over to its end at once, found without being kept
    // (memchr reads gigabytes a second), not a window a collection.
    int64_t past = PastLongLine(file, offset + length);
    if (job != nullptr && past < size) job->pending = true;
    return options_.store->AppendObservations(log_id, {}, source, past);
  }
  if (end == std::string::npos) return OkStatus();
  text.resize(end + 1);
  std::vector<store::ObservationRow> rows;
  int64_t now = Micros(options_.clock->Now());
  size_t start = 0;
  while (start < text.size()) {
    size_t newline = text.find('\n', start);
    std::string_view line(text.data() + start, newline - start);
    if (job != nullptr && job->progress) {
      if (std::optional<tune::ProgressMark> mark = tune::ParseProgressLine(line)) {
        (mark->epochs ? job->epoch_mark : job->step_mark) = *mark;
      }
    }
    for (tune::MetricSample& sample : parser.ParseLine(line)) {
      rows.push_back({.time_us = sample.timestamp_us.value_or(now),
                      .metric = std::move(sample.name),
                      .value = std::move(sample.value)});
    }
    start = newline + 1;
  }
  int64_t read = static_cast<int64_t>(text.size()) - (ended_line ? 1 : 0);
  return options_.store->AppendObservations(log_id, rows, source, offset + read);
}

Status MetricsCollector::ReadEventDirectory(const api::Trial& trial,
                                            const controller::MetricsFile& dir) {
  JobRead unbounded{.budget = INT64_MAX};
  // Keyed by the file's path, as trials' event files always were; named
  // by Katib's rule, with the directory as the container sees it.
  return ReadEventFiles(TrialLogId(trial), dir.host_path, "", dir.host_path + "/", unbounded,
                        [&](const std::string& path, const std::vector<tune::TfScalar>& scalars) {
                          std::string relative = path.substr(0, path.rfind('/') + 1);
                          std::string event_dir = dir.container_path;
                          if (!relative.empty())
                            event_dir += "/" + relative.substr(0, relative.size() - 1);
                          std::vector<store::ObservationRow> rows;
                          for (tune::MetricSample& sample : tune::MatchTfScalars(
                                   api::MetricNamesOf(trial), event_dir, scalars)) {
                            rows.push_back({.time_us = *sample.timestamp_us,
                                            .metric = std::move(sample.name),
                                            .value = std::move(sample.value)});
                          }
                          return rows;
                        });
}

Status MetricsCollector::Collect(const store::ObjectKey& key) {
  Result<api::Json> stored = options_.store->Get(key);
  if (!stored.ok()) return OkStatus();  // the trial controller handles a deleted trial
  api::DecodeResult decoded = api::DecodeObject(*stored);
  auto* trial = decoded.object ? std::get_if<api::Trial>(&*decoded.object) : nullptr;
  if (trial == nullptr) return OkStatus();
  // Read as a trial's always was (no budget of a job's), its counts of a
  // total noted for the trial's job.
  JobRead marks{.budget = std::numeric_limits<int64_t>::max(), .progress = true};
  if (controller::IsFinished(controller::PhaseOf(*trial))) {
    // Once: what the job's status says of its metrics, from all of it.
    if (parsers_.erase(trial->metadata.uid) > 0) {
      marks.final = true;
      WriteTrialJobStatus(*trial, marks);
    }
    return OkStatus();
  }
  std::string kind = api::CollectorKindOf(*trial);
  if (kind == "TensorFlowEvent") {
    return ReadEventDirectory(*trial, controller::MetricsFileOf(*trial, options_.metrics_dir));
  }
  if (kind != "StdOut" && kind != "File") return OkStatus();
  ASSIGN_OR_RETURN(const tune::MetricsParser* parser, ParserFor(*trial));
  if (kind == "File") {
    controller::MetricsFile file = controller::MetricsFileOf(*trial, options_.metrics_dir);
    RETURN_IF_ERROR(
        ReadSource(TrialLogId(*trial), *parser, file.host_path, file.host_path, &marks));
  } else {
    ASSIGN_OR_RETURN(std::vector<api::Json> pods, PrimaryPodsOf(*options_.store, *trial));
    for (const api::Json& pod : pods) {
      std::string path =
          options_.log_path(trial->metadata.namespace_, api::StringAt(pod, {"metadata", "name"}),
                            trial->spec.primary_container_name);
      RETURN_IF_ERROR(ReadSource(TrialLogId(*trial), *parser, path, path, &marks));
    }
  }
  WriteTrialJobStatus(*trial, marks);
  return OkStatus();
}

void MetricsCollector::WriteTrialJobStatus(const api::Trial& trial, JobRead& marks) {
  // The trial's job (a TrainJob, a PyTorchJob, a batch Job) shows what its
  // output declares, as a job of its own does.
  Result<api::Json> job = options_.store->Get(controller::TrialJobKey(trial));
  if (!job.ok()) return;
  marks.uid = api::StringAt(*job, {"metadata", "uid"});
  WriteDerivedStatus(*job, TrialLogId(trial), marks);
  if (marks.final) progress_.erase(marks.uid);
}

std::vector<MetricsCollector::Source> MetricsCollector::MetricsSourcesOf(
    const api::Json& stored) const {
  std::vector<Source> sources;
  const api::JobShape* shape = api::JobShapeOf(api::StoreKindOf(stored));
  if (shape == nullptr) return sources;
  Result<std::vector<std::string>> owners = PodOwnersOf(*options_.store, stored);
  for (const std::string& owner : owners.ok() ? *owners : std::vector<std::string>()) {
    (void)options_.store->ScanOwnedBy("Pod", owner, [&](const api::Json& pod) {
      std::string container = shape->metrics_container(stored, pod);
      if (container.empty()) return;
      sources.push_back({api::StringAt(pod, {"metadata", "name"}),
                         api::StringAt(pod, {"metadata", "uid"}), std::move(container)});
    });
  }
  return sources;
}

namespace {

// Whether `job` has metrics of its own: not a trial's job, whose metrics
// go to the trial's log, read by the trial's collector with the
// objective's names; nor a job that is part of another job (a TrainJob's
// JobSet and Jobs), whose metrics are that job's.
bool HasOwnMetrics(const api::Json& job) {
  if (!api::StringAt(job, {"metadata", "labels", std::string(api::kTrialLabel).c_str()}).empty()) {
    return false;
  }
  for (const api::Json& ref : api::ArrayRefAt(job, {"metadata", "ownerReferences"})) {
    if (api::BoolAt(ref, "controller") && api::IsJobKind(api::StringAt(ref, "kind"))) {
      return false;
    }
  }
  return true;
}

}  // namespace

Result<const tune::MetricsParser*> MetricsCollector::JobParser(
    const std::vector<std::string>& filters) {
  std::string key = Join(filters, "\n");
  auto it = job_parsers_.find(key);
  if (it != job_parsers_.end()) return it->second.get();
  // Few jobs name filters of their own; a bound all the same.
  if (job_parsers_.size() >= 64) job_parsers_.clear();
  ASSIGN_OR_RETURN(tune::MetricsParser parser,
                   tune::MetricsParser::Make({}, filters, tune::MetricsFormat::kText));
  auto [entry, inserted] =
      job_parsers_.emplace(key, std::make_unique<tune::MetricsParser>(std::move(parser)));
  return entry->second.get();
}

Status MetricsCollector::ReadEventFiles(const std::string& log_id, const std::string& folder,
                                        const std::string& dir, const std::string& source_prefix,
                                        JobRead& budget, const EventRows& rows_of) {
  // TensorFlow, tensorboardX and torch all name their files
  // events.out.tfevents.<time>.<host>...: nothing else is read. Older
  // files (earlier times) sort first.
  Result<ArtifactListing> files = ListArtifacts(folder, dir, /*recursive=*/true, 1000, "tfevents");
  if (!files.ok()) return OkStatus();  // nothing written there yet
  for (const Artifact& file : files->items) {
    std::string source = source_prefix + file.path;
    if (corrupt_.contains(source)) continue;
    if (budget.budget <= 0) {
      budget.pending = true;
      return OkStatus();
    }
    Result<OpenedArtifact> opened = OpenArtifact(folder, file.path);
    if (!opened.ok()) continue;
    ASSIGN_OR_RETURN(int64_t offset, options_.store->ObservationsReadTo(source));
    if (opened->size < offset) offset = 0;  // replaced: read it again
    if (opened->size == offset) continue;
    std::string data =
        ReadAt(*opened, offset, std::min({opened->size - offset, kMaxReadBytes, budget.budget}));
    int64_t got = static_cast<int64_t>(data.size());
    if (got == 0) continue;
    budget.budget -= got;
    tune::TfEventsRead read = tune::ReadTfEvents(data);
    // A corrupt record would be read and refused at every step: what came
    // before it counts, nothing after it does (as a TFRecord reader stops).
    if (read.corrupt) corrupt_.insert(source);
    // A record no window can hold (a graph definition, an image) holds no
    // scalar: passed over by its length once it is whole in the file, so
    // what follows it is read.
    int64_t end = offset + static_cast<int64_t>(read.consumed);
    if (read.next_record > static_cast<uint64_t>(kMaxReadBytes) &&
        read.next_record <= static_cast<uint64_t>(opened->size - end)) {
      read.consumed += read.next_record;
      budget.pending = true;
    } else if (offset + got < opened->size && !read.corrupt) {
      // Left unread by the bound (not a record still being written, which
      // its writer finishes, or never will once the job has ended).
      budget.pending = true;
    }
    if (read.consumed == 0) continue;
    RETURN_IF_ERROR(options_.store->AppendObservations(
        log_id, rows_of(file.path.substr(dir.empty() ? 0 : dir.size() + 1), read.scalars), source,
        offset + static_cast<int64_t>(read.consumed)));
  }
  return OkStatus();
}

Status MetricsCollector::ReadJobEvents(const std::string& log_id, const std::string& folder,
                                       const std::string& dir, JobRead& job) {
  // Keyed by the job's log and the file's place in its folder, wherever
  // the state directory is.
  return ReadEventFiles(log_id, folder, dir, log_id + " " + job.uid + " ", job,
                        [](const std::string& path, const std::vector<tune::TfScalar>& scalars) {
                          // Every scalar is a metric, at its own step, named by its tag
                          // after the file's folder (TensorBoard's run: "test/accuracy").
                          std::string run = path.substr(0, path.rfind('/') + 1);
                          std::vector<store::ObservationRow> rows;
                          for (const tune::TfScalar& scalar : scalars) {
                            rows.push_back({.time_us = static_cast<int64_t>(scalar.wall_time * 1e6),
                                            .metric = run + scalar.tag,
                                            .value = scalar.value,
                                            .step = scalar.step});
                          }
                          return rows;
                        });
}

void MetricsCollector::ForgetCorrupt(const std::string& log_id) {
  std::string prefix = log_id + " ";
  std::erase_if(corrupt_, [&](const std::string& source) { return source.starts_with(prefix); });
}

Result<bool> MetricsCollector::CollectJob(const store::ObjectKey& key) {
  std::string id = store::JobObservationsId(key.kind, key.namespace_, key.name);
  Result<api::Json> stored = options_.store->Get(key);
  if (stored.status().code() == StatusCode::kNotFound) {
    ForgetCorrupt(id);
    RETURN_IF_ERROR(options_.store->DeleteObservations(id));  // gone, and so is its log
    return false;
  }
  RETURN_IF_ERROR(stored.status());
  if (!HasOwnMetrics(*stored)) return false;
  std::map<std::string, std::string> annotations;
  for (const auto& [k, v] : api::ObjectAt(*stored, {"metadata", "annotations"}).items()) {
    if (v.is_string()) annotations.emplace(k, v.get<std::string>());
  }
  // Checked when the job was admitted; an unusable one reads nothing.
  api::JobMetricsSpec spec = api::JobMetricsSpecOf(annotations);
  bool ended = api::JobOutcome(*stored).has_value();
  // One collection reads at most kMaxReadBytes of a job, whatever its
  // files: the rest is read at the next, soon after.
  JobRead job{.uid = api::StringAt(*stored, {"metadata", "uid"}), .final = ended};
  std::string folder = options_.artifacts_dir.empty()
                           ? ""
                           : api::ArtifactsDirOf(options_.artifacts_dir, key.namespace_, job.uid);
  std::error_code ec;
  bool has_folder = !folder.empty() && std::filesystem::is_directory(folder, ec);
  bool more = false;  // while it runs: worth reading again soon
  switch (spec.kind) {
    case api::JobMetricsSpec::Kind::kPush:
    case api::JobMetricsSpec::Kind::kNone:
      return false;
    case api::JobMetricsSpec::Kind::kFile: {
      if (!has_folder) break;
      ASSIGN_OR_RETURN(const tune::MetricsParser* parser, JobParser(spec.filters));
      Result<OpenedArtifact> file = OpenArtifact(folder, spec.path);
      if (file.ok()) {
        RETURN_IF_ERROR(ReadOpened(*file, id, *parser, id + " " + job.uid + " " + spec.path, &job));
      }
      more = true;
      break;
    }
    case api::JobMetricsSpec::Kind::kTensorFlowEvent:
      if (!has_folder) break;
      RETURN_IF_ERROR(ReadJobEvents(id, folder, spec.path, job));
      more = true;
      break;
    case api::JobMetricsSpec::Kind::kStdOut: {
      ASSIGN_OR_RETURN(const tune::MetricsParser* parser, JobParser(spec.filters));
      std::vector<Source> sources = MetricsSourcesOf(*stored);
      job.progress = true;
      for (const Source& source : sources) {
        std::string path = options_.log_path(key.namespace_, source.pod, source.container);
        // Its own offset, by the pod's uid: a trial may read the same log,
        // and a pod made again under the same name starts a new one.
        RETURN_IF_ERROR(
            ReadSource(id, *parser, path, fmt::format("{} {} {}", id, source.uid, path), &job));
      }
      more = !sources.empty();
      break;
    }
  }
  WriteDerivedStatus(*stored, id, job);
  if (ended && !job.pending) progress_.erase(job.uid);
  // Ended: nothing more will be written, once what was is read.
  if (ended && !job.pending) ForgetCorrupt(id);
  return job.pending || (more && !ended);
}

// Marks a report made from a job's output: a push is checked field by
// field (api/trainer_status.h) and can never carry it, so a report
// without it is the trainer's own, which stands.
constexpr const char* kDerivedFrom = "derivedFrom";

namespace {

// How often a running job's metrics are read from its log for its status.
constexpr Duration kSummaryEvery = std::chrono::seconds(10);

// Each metric's latest value, as KEP-2779's `metrics` holds them: at most
// 256, names and values of 1 to 64 characters (others are left out).
api::Json LatestMetrics(const store::ObservationSummary& summary) {
  api::Json metrics = api::Json::array();
  for (const store::ObservationSeries& s : summary.series) {
    const std::string& value = s.latest.value;
    if (metrics.size() == api::kMaxTrainerMetrics || s.metric.empty() ||
        s.metric.size() > api::kMaxTrainerMetricText || value.empty() ||
        value.size() > api::kMaxTrainerMetricText) {
      continue;
    }
    metrics.push_back({{"name", s.metric}, {"value", value}});
  }
  return metrics;
}

}  // namespace

void MetricsCollector::WriteDerivedStatus(const api::Json& stored, const std::string& log_id,
                                          const JobRead& job) {
  // A TrainJob's own field (KEP-2779), and the same, trainyard's, under
  // any other job's status (kubeflow.org/v1 jobs, batch Jobs, JobSets).
  const api::Json* reported = api::FindAt(stored, {"status", "trainerStatus"});
  bool is_report = reported != nullptr && reported->is_object();
  if (is_report && !reported->contains(kDerivedFrom)) return;
  TimePoint now = options_.clock->Now();
  if (progress_.size() >= 1024) {  // forget jobs not read for ten minutes
    std::erase_if(progress_,
                  [&](const auto& e) { return now - e.second.seen > std::chrono::minutes(10); });
  }
  DerivedProgress& derived = progress_[job.uid];
  derived.seen = now;
  api::Json status = is_report ? *reported : api::Json::object();
  bool moved = false;
  if (job.epoch_mark) moved = derived.tracker.Observe(*job.epoch_mark, now) || moved;
  if (job.step_mark) moved = derived.tracker.Observe(*job.step_mark, now) || moved;
  std::optional<tune::Progress> progress = derived.tracker.Current();
  bool changed = moved && progress.has_value();
  if (changed) {
    status["progressPercentage"] = progress->percentage;
    status.erase("estimatedRemainingSeconds");
    if (progress->remaining_seconds) {
      status["estimatedRemainingSeconds"] =
          std::min<int64_t>(*progress->remaining_seconds, INT32_MAX);
    }
  }
  // At most every kSummaryEvery while it runs: a job printing a metric a
  // second would otherwise write its status as often.
  if (job.final || now - derived.summarized >= kSummaryEvery) {
    Result<store::ObservationSummary> summary = options_.store->SummarizeObservations(log_id);
    api::Json metrics = summary.ok() ? LatestMetrics(*summary) : api::Json::array();
    // An empty log is read again at the next collection, not in 10 s.
    if (!metrics.empty()) derived.summarized = now;
    if (!metrics.empty() && status.value("metrics", api::Json()) != metrics) {
      status["metrics"] = std::move(metrics);
      changed = true;
    }
  }
  if (!changed) return;
  status["lastUpdatedTime"] = FormatRfc3339(now);
  status[kDerivedFrom] = "output";
  api::Json doc = stored;
  doc["status"]["trainerStatus"] = std::move(status);
  // Changed meanwhile (its reconciler wrote its status): the next read is
  // written, from a tracker that starts again.
  if (!options_.store->UpdateStatus(std::move(doc)).ok()) progress_.erase(job.uid);
}

}  // namespace trainyard::engine
