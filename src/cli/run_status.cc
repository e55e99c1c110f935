#include "cli/run_status.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "api/job_shape.h"
#include "api/object.h"
#include "api/pod_object.h"
#include "api/registry.h"
#include "api/tracking.h"
#include "common/strings.h"
#include "controller/conditions.h"
#include "controller/owned.h"
#include "controller/pod_state.h"

namespace trainyard::cli {
namespace {

// How a pod's containers ended when it says more than their exit codes
// ("master-0 OOMKilled"), as `get pods` would show it.
void NoteEnds(const api::Pod& pod, const std::string& job, std::set<std::string>& notes) {
  std::string name = pod.metadata.name;
  if (name.starts_with(job + "-")) name = name.substr(job.size() + 1);
  for (const auto* list : {&pod.status.init_container_statuses, &pod.status.container_statuses}) {
    for (const api::ContainerStatus& c : *list) {
      for (const api::ContainerState* state : {&c.state, &c.last_state}) {
        if (!state->terminated) continue;
        const std::string& reason = state->terminated->reason;
        if (reason != "Completed" && reason != "Error") notes.insert(name + " " + reason);
      }
    }
  }
}

// A batch/v1 Job speaks of Complete where kubeflow jobs say Succeeded.
void RefreshBatch(const api::BatchJob& job, JobView& view) {
  view.state = "Created";
  view.message.clear();
  for (const api::BatchJobCondition& c : job.status.conditions) {
    if (c.status != "True") continue;
    view.state = c.type == "Complete" ? "Succeeded" : c.type;
    view.message = c.message;
    view.finished = c.type == "Complete" || c.type == "Failed";
    view.succeeded = c.type == "Complete";
  }
  if (!view.finished && job.status.active.value_or(0) > 0) view.state = "Running";
}

// A TrainJob or JobSet: metav1 conditions; Complete (Completed) or
// Failed end it; otherwise Running once a Job of it is active, as
// upstream's users asked it to say (kubeflow/trainer#2713).
void RefreshJobSetLike(const api::Json& stored, JobView& view) {
  view.state = "Created";
  view.message.clear();
  for (const api::Json& c : api::ArrayRefAt(stored, {"status", "conditions"})) {
    if (api::StringAt(c, "status") != "True") continue;
    std::string type = api::StringAt(c, "type");
    view.state = type == "Complete" || type == "Completed" ? "Succeeded" : type;
    view.message = api::StringAt(c, "message");
    view.finished = view.finished || view.state == "Succeeded" || type == "Failed";
    view.succeeded = view.state == "Succeeded";
  }
  if (view.finished || view.state == "Suspended") return;
  const api::JobShape* shape = api::JobShapeOf(view.key.kind);
  const char* jobs = shape != nullptr ? shape->child_jobs_status.c_str() : "";
  for (const api::Json& s : api::ArrayRefAt(stored, {"status", jobs})) {
    if (api::IntAt(s, {"active"}) > 0) view.state = "Running";
  }
}

// A Deployment: how many of its pods are ready.
void RefreshWorkload(const api::Json& stored, JobView& view) {
  view.state = fmt::format("{}/{} ready", api::IntAt(stored, {"status", "readyReplicas"}),
                           api::IntAt(stored, {"spec", "replicas"}, 1));
}

}  // namespace

std::string DescribeProgress(engine::Engine& engine, const JobView& view) {
  std::map<std::string, std::map<std::string, int>> phases;  // type -> phase -> count
  std::set<std::string> notes;
  int restarts = 0;
  Result<store::ObjectStore::ListResult> pods = engine.store().List("Pod", view.key.namespace_);
  const api::JobShape* shape = api::JobShapeOf(view.key.kind);
  if (pods.ok() && (shape != nullptr || view.workload)) {
    for (const api::Json& doc : pods->items) {
      Result<api::Pod> pod = api::DecodePod(doc);
      if (!pod.ok()) continue;
      if (view.workload) {
        // A Deployment's pods are known by their owner alone.
        if (!controller::ControlledBy(doc, view.uid)) continue;
        restarts += controller::RestartsOf(*pod);
        NoteEnds(*pod, view.key.name, notes);
        continue;
      }
      auto job = pod->metadata.labels.find(shape->pod_job_label);
      if (job == pod->metadata.labels.end() || job->second != view.key.name) continue;
      std::string type =
          shape->pod_role_label.empty() ? "pod" : pod->metadata.labels[shape->pod_role_label];
      std::string phase = pod->status.phase.empty() ? "pending" : AsciiLower(pod->status.phase);
      ++phases[type][phase];
      restarts += controller::RestartsOf(*pod);
      NoteEnds(*pod, view.key.name, notes);
    }
  }
  std::string text = fmt::format("{}: {}", view.key.name, view.state);
  if (size_t why = view.message.find(": "); view.state == "Waiting" && why != std::string::npos) {
    text += " (" + view.message.substr(why + 2) + ")";  // the short resource
  }
  for (const auto& [type, counts] : phases) {
    int total = 0;
    for (const auto& [phase, n] : counts) total += n;
    std::vector<std::string> parts;
    for (const auto& [phase, n] : counts) parts.push_back(fmt::format("{}/{} {}", n, total, phase));
    text += fmt::format(", {} {}", type, fmt::join(parts, " "));
  }
  for (const std::string& note : notes) text += ", " + note;
  if (restarts > 0) text += fmt::format(", {} restart{}", restarts, restarts == 1 ? "" : "s");
  return text;
}

void Refresh(engine::Engine& engine, JobView& view) {
  Result<api::Json> stored = engine.store().Get(view.key);
  if (!stored.ok()) {
    view.finished = true;  // deleted (ttlSecondsAfterFinished): it had finished
    return;
  }
  view.uid = api::StringAt(*stored, {"metadata", "uid"});
  if (view.workload) {
    RefreshWorkload(*stored, view);
    return;
  }
  view.output_dir = api::ArtifactsDirOf(engine.artifacts_dir(), view.key.namespace_,
                                        api::StringAt(*stored, {"metadata", "uid"}));
  // A kind that runs Jobs of its own speaks in metav1 conditions.
  const api::JobShape* shape = api::JobShapeOf(view.key.kind);
  if (shape != nullptr && !shape->child_jobs_status.empty()) {
    RefreshJobSetLike(*stored, view);
    return;
  }
  api::DecodeResult decoded = api::DecodeObject(*stored);
  if (const auto* batch = decoded.object ? std::get_if<api::BatchJob>(&*decoded.object) : nullptr) {
    RefreshBatch(*batch, view);
    return;
  }
  const auto* job = decoded.object ? std::get_if<api::TrainingJob>(&*decoded.object) : nullptr;
  if (job == nullptr || job->status.conditions.empty()) return;
  const api::JobCondition& last = job->status.conditions.back();
  // Scheduled=False is the job waiting for room: say that, and why.
  view.state = last.type == "Scheduled" && last.status == "False" ? "Waiting" : last.type;
  view.message = last.message;
  view.finished = controller::IsFinished(job->status.conditions);
  view.succeeded = controller::IsTrue(job->status.conditions, "Succeeded");
}

void StatusLine::Clear() {
  if (tty_ && !last_line_.empty()) fmt::print(stderr, "\r\033[K");
}

void StatusLine::Show(std::vector<JobView>& jobs,
                      std::vector<std::unique_ptr<TuningView>>& experiments) {
  Duration elapsed = Elapsed();
  std::vector<std::string> parts;
  for (JobView& view : jobs) {
    bool was_finished = view.finished;
    Refresh(engine_, view);
    if (view.finished && !was_finished) view.took = elapsed;
    parts.push_back(DescribeProgress(engine_, view));
  }
  for (const auto& view : experiments) parts.push_back(view->Poll());
  std::string progress = fmt::format("{}", fmt::join(parts, " | "));
  std::string line = fmt::format("{}, {}s", progress,
                                 std::chrono::duration_cast<std::chrono::seconds>(elapsed).count());
  if (tty_) {
    fmt::print(stderr, "{}", line);
  } else if (!quiet_ && progress != last_progress_) {
    fmt::print(stderr, "{}\n", line);
  }
  last_line_ = line;
  last_progress_ = progress;
  std::fflush(stderr);
}

}  // namespace trainyard::cli
