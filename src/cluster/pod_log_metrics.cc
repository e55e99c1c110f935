#include "cluster/pod_log_metrics.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

#include "api/object.h"
#include "engine/metrics_collector.h"
#include "engine/primary_pods.h"

namespace trainyard::cluster {
namespace {

// A line longer than this (without its newline) is skipped, so a line
// with no end cannot take the operator's memory.
constexpr size_t kMaxLineBytes = 1 << 20;

// One run of a container whose log can be asked for, as the kubelet
// serves them: the current run (`state` running or terminated), and the
// last one that ended (`lastState.terminated`, which is also what a plain
// read gives while the container waits to restart).
struct ContainerRun {
  std::string id;  // its containerID, else "run-<n>" by restartCount
  bool previous = false;
  bool ended = false;
};

std::vector<ContainerRun> RunsOf(const api::Json& pod, const std::string& container,
                                 bool job_finished) {
  std::vector<ContainerRun> runs;
  const api::Json& status = api::ObjectAt(pod, {"status"});
  std::string phase = api::StringAt(status, {"phase"});
  for (const api::Json& c : api::ArrayRefAt(status, {"containerStatuses"})) {
    if (api::StringAt(c, {"name"}) != container) continue;
    const api::Json& state = api::ObjectAt(c, {"state"});
    int64_t restarts = api::IntAt(c, {"restartCount"});
    bool waiting = !state.contains("running") && !state.contains("terminated");
    if (const api::Json* last = api::FindAt(c, {"lastState", "terminated"})) {
      // While it waits to restart, restartCount still counts the run that
      // ended; once the next has started, it counts that one.
      std::string id = api::StringAt(*last, {"containerID"},
                                     fmt::format("run-{}", waiting ? restarts : restarts - 1));
      runs.push_back({.id = id, .previous = true, .ended = true});
    }
    if (!waiting) {
      std::string key = state.contains("running") ? "running" : "terminated";
      std::string id = api::StringAt(
          c, {"containerID"},
          api::StringAt(state, {key.c_str(), "containerID"}, fmt::format("run-{}", restarts)));
      // A finished job's pods have ended, whatever the cache says yet.
      bool ended = key == "terminated" || phase == "Succeeded" || phase == "Failed" || job_finished;
      runs.push_back({.id = id, .previous = false, .ended = ended});
    }
  }
  return runs;
}

// What a trial's condition says of a log given up: a pod that was never
// on a node has none (kube-apiserver answers its log with nothing, 204);
// else why its last read failed.
std::string WhyUnread(const api::Json& pod, const std::string& failure) {
  std::string name = api::StringAt(pod, {"metadata", "name"});
  if (api::StringAt(pod, {"spec", "nodeName"}).empty()) {
    return fmt::format(
        "the log of pod {}: it was never scheduled to a node, so no container of it ran there "
        "and it has no log; values it may have printed are not the trial's",
        name);
  }
  return fmt::format(
      "the log of pod {} ({}): values it printed after those read are not the "
      "trial's",
      name, failure.empty() ? "it could not be read" : failure);
}

std::string SourceOf(const api::Json& pod, const std::string& container, const std::string& id) {
  return fmt::format("pod-log:{}/{}/{}/{}/{}", api::StringAt(pod, {"metadata", "namespace"}),
                     api::StringAt(pod, {"metadata", "name"}),
                     api::StringAt(pod, {"metadata", "uid"}), container, id);
}

}  // namespace

std::string PodLogPath(const PodLogRequest& r) {
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log?container={}&timestamps=true",
                                 r.namespace_, r.pod, r.container);
  path += r.previous ? "&previous=true" : "&follow=true";
  if (r.since_ns > 0) {
    // sinceTime is whole seconds: what is read again is skipped by its time.
    TimePoint since{std::chrono::seconds(r.since_ns / 1'000'000'000)};
    path += "&sinceTime=" + FormatRfc3339(since);
  }
  return path;
}

struct PodLogMetrics::Follow {
  std::string source;
  std::string trial;  // "namespace/name"
  PodLogRequest request;
  bool after_end = false;
  std::unique_ptr<tune::MetricsParser> parser;
  kube::WatchHandle handle;
  std::thread thread;
  Status status;  // written by `thread` before `finished`
  std::atomic<bool> finished = false;
};

namespace {

// Reads one run's log into the trial's observations (a Follow's thread).
class LogReader {
 public:
  LogReader(const PodLogMetricsOptions& options, const std::string& source,
            const std::string& trial, const tune::MetricsParser& parser, int64_t read_to)
      : options_(options),
        source_(source),
        trial_(trial),
        parser_(parser),
        resume_after_(read_to),
        read_to_(read_to) {}

  // Takes a piece of the log; false once the log cannot be kept.
  bool Take(std::string_view data) {
    size_t search = pending_.size();  // what was pending holds no newline
    pending_.append(data);
    size_t start = 0;
    for (size_t end; (end = pending_.find('\n', search)) != std::string::npos;
         start = search = end + 1) {
      if (skipping_) {
        skipping_ = false;  // the end of a line too long to read
        continue;
      }
      if (end - start <= kMaxLineBytes) Line(std::string_view(pending_).substr(start, end - start));
    }
    pending_.erase(0, start);
    if (pending_.size() > kMaxLineBytes) {
      pending_.clear();
      skipping_ = true;
    }
    return Flush(read_to_);
  }

  // The run has ended and its log was read to its end: a last line without
  // its newline counts, and the source is read to its end.
  Status Finish() {
    if (!skipping_ && !pending_.empty()) Line(pending_);
    pending_.clear();
    if (!Flush(kReadToEnd, /*always=*/true)) return appended_;
    return OkStatus();
  }

  Status appended() const { return appended_; }

 private:
  void Line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t space = line.find(' ');
    std::optional<int64_t> stamp = space == std::string_view::npos
                                       ? std::nullopt
                                       : tune::ParseRfc3339Nanos(line.substr(0, space));
    if (stamp) {
      // Read before the operator restarted. (Only that: the runtime stamps
      // stdout and stderr lines apart, so times need not rise line by line.)
      if (*stamp <= resume_after_) return;
      read_to_ = std::max(read_to_, *stamp);
      line.remove_prefix(space + 1);
    }
    int64_t time_us = stamp ? *stamp / 1000
                            : std::chrono::duration_cast<std::chrono::microseconds>(
                                  options_.clock->Now().time_since_epoch())
                                  .count();
    for (tune::MetricSample& sample : parser_.ParseLine(line)) {
      rows_.push_back({.time_us = sample.timestamp_us.value_or(time_us),
                       .metric = std::move(sample.name),
                       .value = std::move(sample.value)});
    }
  }

  // Appends what was parsed, with how far the log is read. Lines with no
  // metric are not worth a write: read again after a restart, they give
  // nothing.
  bool Flush(int64_t read_to, bool always = false) {
    if (rows_.empty() && !always) return true;
    appended_ = options_.observations->AppendObservations(trial_, rows_, source_, read_to);
    rows_.clear();
    return appended_.ok();
  }

  const PodLogMetricsOptions& options_;
  const std::string& source_;
  const std::string& trial_;
  const tune::MetricsParser& parser_;
  const int64_t resume_after_;  // how far the log was read before this read
  int64_t read_to_;             // the latest line time read
  std::string pending_;
  bool skipping_ = false;
  std::vector<store::ObservationRow> rows_;
  Status appended_;
};

}  // namespace

PodLogMetrics::PodLogMetrics(PodLogMetricsOptions options) : options_(std::move(options)) {}

PodLogMetrics::~PodLogMetrics() { Stop(); }

void PodLogMetrics::Stop() {
  for (auto& [source, follow] : follows_) follow->handle.Stop();
  for (auto& [source, follow] : follows_) follow->thread.join();
  follows_.clear();
}

void PodLogMetrics::Reap() {
  for (auto it = follows_.begin(); it != follows_.end();) {
    Follow& follow = *it->second;
    if (!follow.finished) {
      ++it;
      continue;
    }
    follow.thread.join();
    if (follow.status.ok()) {
      failures_.erase(follow.source);
      last_failure_.erase(follow.source);
    } else if (follow.after_end) {
      int failed = ++failures_[follow.source];
      last_failure_[follow.source] = std::string(follow.status.message());
      options_.log->Warning(
          "trainyard operator: trial {}: reading the log of pod {} ({} of {}): {}", follow.trial,
          follow.request.pod, failed, options_.max_failures, follow.status.message());
    }
    it = follows_.erase(it);
  }
}

Status PodLogMetrics::Start(const api::Trial& trial, std::string source, PodLogRequest request,
                            bool after_end) {
  ASSIGN_OR_RETURN(tune::MetricsParser parser, engine::MakeMetricsParser(trial));
  auto follow = std::make_unique<Follow>();
  follow->source = std::move(source);
  follow->trial = trial.metadata.namespace_ + "/" + trial.metadata.name;
  follow->request = std::move(request);
  follow->after_end = after_end;
  follow->parser = std::make_unique<tune::MetricsParser>(std::move(parser));
  Follow* f = follow.get();
  f->thread = std::thread([this, f] {
    Result<int64_t> read_to = options_.observations->ObservationsReadTo(f->source);
    Status status = read_to.status();
    if (status.ok()) {
      f->request.since_ns = *read_to;
      LogReader reader(options_, f->source, f->trial, *f->parser, *read_to);
      Result<bool> whole = options_.source(
          f->request, [&reader](std::string_view data) { return reader.Take(data); }, f->handle);
      status = whole.ok() ? reader.appended() : whole.status();
      // Only a read to the answer's end, begun after the run had ended,
      // has read all of its log.
      if (status.ok() && *whole && f->after_end && !f->handle.stopped()) status = reader.Finish();
    }
    f->status = std::move(status);
    f->finished = true;
  });
  follows_.emplace(f->source, std::move(follow));
  return OkStatus();
}

Result<controller::OutputRead> PodLogMetrics::Collect(const api::Trial& trial, bool job_finished) {
  if (api::CollectorKindOf(trial) != "StdOut") return controller::OutputRead{};
  Reap();
  ASSIGN_OR_RETURN(std::vector<api::Json> pods, engine::PrimaryPodsOf(*options_.store, trial));
  const std::string& container = trial.spec.primary_container_name;
  std::string trial_id = trial.metadata.namespace_ + "/" + trial.metadata.name;
  bool reading = false;
  for (const api::Json& pod : pods) {
    for (const ContainerRun& run : RunsOf(pod, container, job_finished)) {
      std::string source = SourceOf(pod, container, run.id);
      if (follows_.contains(source)) {
        reading = reading || run.ended;
        continue;
      }
      ASSIGN_OR_RETURN(int64_t read_to, options_.observations->ObservationsReadTo(source));
      if (read_to == kReadToEnd) continue;
      if (run.ended && failures_[source] >= options_.max_failures) {
        // Given up: what was read is the trial's; the trial may conclude,
        // and says why its values may be missing.
        std::string why = WhyUnread(pod, last_failure_[source]);
        options_.log->Error("trainyard operator: trial {}: gave up reading {}", trial_id, why);
        unread_[trial_id] = why;
        failures_.erase(source);
        last_failure_.erase(source);
        RETURN_IF_ERROR(
            options_.observations->AppendObservations(trial_id, {}, source, kReadToEnd));
        continue;
      }
      reading = reading || run.ended;
      // Reads of running containers take at most max_follows threads; an
      // ended run's read is short and holds its trial, so it may take as
      // many again.
      int busy = static_cast<int>(follows_.size());
      if (busy >= options_.max_follows * (run.ended ? 2 : 1)) continue;  // waits for a slot
      RETURN_IF_ERROR(Start(trial, std::move(source),
                            {.namespace_ = trial.metadata.namespace_,
                             .pod = api::StringAt(pod, {"metadata", "name"}),
                             .container = container,
                             .previous = run.previous},
                            run.ended));
    }
  }
  controller::OutputRead read{.reading = reading};
  if (auto it = unread_.find(trial_id); it != unread_.end()) read.unread = it->second;
  return read;
}

}  // namespace trainyard::cluster
