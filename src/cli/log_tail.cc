#include "cli/log_tail.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/json.h"
#include "api/pod_object.h"
#include "api/well_known.h"

namespace trainyard::cli {
namespace {

std::string Label(const api::Pod& pod, std::string_view key) {
  auto it = pod.metadata.labels.find(std::string(key));
  return it == pod.metadata.labels.end() ? "" : it->second;
}

}  // namespace

void LineSplitter::Feed(std::string_view bytes, const Emit& emit) {
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    // A full piece goes out once the line is known to go on past it (and
    // not to end right there, which would print an empty line after it).
    if (partial_.size() == max_line_ && newline != 0) {
      emit(partial_);
      partial_.clear();
    }
    size_t room = max_line_ - partial_.size();
    if (newline != std::string_view::npos && newline <= room) {
      partial_.append(bytes.substr(0, newline));
      emit(partial_);
      partial_.clear();
      bytes.remove_prefix(newline + 1);
      continue;
    }
    size_t take = std::min(room, bytes.size());
    partial_.append(bytes.substr(0, take));
    bytes.remove_prefix(take);
  }
}

void LineSplitter::Flush(const Emit& emit) {
  if (partial_.empty()) return;
  emit(partial_);
  partial_.clear();
}

LogTail::LogTail(engine::Engine& engine, LogMode mode, bool several_jobs, std::FILE* out,
                 bool hide_trials, std::vector<std::string> trial_prefixes)
    : engine_(engine),
      mode_(mode),
      several_jobs_(several_jobs),
      hide_trials_(hide_trials),
      trial_prefixes_(std::move(trial_prefixes)),
      out_(out) {
  if (mode_ == LogMode::kNone) return;
  Result<store::WatchId> watch = engine_.store().Watch(0, [this](const store::WatchEvent& e) {
    if (e.type == store::EventType::kAdded && api::IsPodObject(e.object)) Follow(e.object);
  });
  if (watch.ok()) watch_ = *watch;
}

LogTail::~LogTail() {
  if (watch_) engine_.store().StopWatch(*watch_);
}

void LogTail::Follow(const api::Json& doc) {
  // Decode only pods not seen before: this runs at every loop step.
  const api::Json& meta = doc["metadata"];
  std::string key = api::StringAt(meta, "namespace") + "/" + api::StringAt(meta, "name");
  if (!seen_.insert(key).second) return;
  Result<api::Pod> pod = api::DecodePod(doc);
  if (!pod.ok() || pod->spec.containers.empty()) return;
  if (hide_trials_ && !Label(*pod, api::kTrialLabel).empty()) return;
  // A batch/v1 Job has one role: its pods count as the master's.
  std::string batch_job = Label(*pod, api::kBatchJobNameLabel);
  if (mode_ == LogMode::kMaster && batch_job.empty() &&
      Label(*pod, api::kLabelJobRole) != "master") {
    return;
  }
  std::string job = batch_job.empty() ? Label(*pod, api::kLabelJobName) : batch_job;
  // "worker-1" for a replica; for a batch pod its name after the job's.
  std::string replica = !batch_job.empty() ? pod->metadata.name.substr(batch_job.size() + 1)
                        : job.empty()      ? pod->metadata.name  // a Deployment's: no job, no role
                                      : fmt::format("{}-{}", Label(*pod, api::kLabelReplicaType),
                                                    Label(*pod, api::kLabelReplicaIndex));
  // A JobSet's (a TrainJob's) pod: "node-0-1", its host name after the JobSet's.
  std::string jobset = Label(*pod, api::kJobSetNameLabel);
  if (hide_trials_ && std::any_of(trial_prefixes_.begin(), trial_prefixes_.end(),
                                  [&](const std::string& p) { return jobset.starts_with(p); })) {
    return;
  }
  std::string host = api::StringAt(pod->spec.extra, "hostname");
  if (!jobset.empty() && host.starts_with(jobset + "-")) {
    job = jobset;
    replica = host.substr(jobset.size() + 1);
  }
  if (several_jobs_) replica = job + "/" + replica;
  // Every container's log: the first container's under the replica's
  // name, the others' (init containers, sidecars, more containers) under
  // "replica/container", as `kubectl logs --prefix` tells them apart.
  const std::string& first = pod->spec.containers[0].name;
  for (const auto* list : {&pod->spec.init_containers, &pod->spec.containers}) {
    for (const api::Container& c : *list) {
      std::string path =
          engine_.node()->LogPath(pod->metadata.namespace_, pod->metadata.name, c.name);
      files_[path].prefix =
          c.name == first ? "[" + replica + "] " : "[" + replica + "/" + c.name + "] ";
    }
  }
}

void LogTail::Poll(bool flush) {
  if (mode_ == LogMode::kNone) return;
  // Pods from before the watch began.
  Result<store::ObjectStore::ListResult> pods = engine_.store().List("Pod", "");
  if (pods.ok()) {
    for (const api::Json& doc : pods->items) Follow(doc);
  }
  // A pod deleted and re-created keeps appending to the same file, so
  // offsets stay valid across restarts.
  for (auto& [path, f] : files_) {
    std::FILE* in = std::fopen(path.c_str(), "rb");
    if (in == nullptr) continue;
    std::fseek(in, f.offset, SEEK_SET);
    auto print = [&, &prefix = f.prefix](std::string_view line) {
      fmt::print(out_, "{}{}\n", prefix, line);
    };
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), in)) > 0) {
      f.offset += static_cast<long>(n);
      f.lines.Feed(std::string_view(buf, n), print);
    }
    std::fclose(in);
    if (flush) f.lines.Flush(print);
  }
  std::fflush(out_);
}

}  // namespace trainyard::cli
