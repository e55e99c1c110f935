#include "api/job_shape.h"
#include "api/kinds.h"
#include "api/object.h"
#include "api/well_known.h"

namespace trainyard::api {
namespace {

std::string Label(const Json& object, std::string_view key) {
  return StringAt(ObjectAt(object, {"metadata", "labels"}), std::string(key).c_str());
}

// A pod template's first container; nullptr when it has none.
const Json* FirstContainer(const Json* pod_template_spec) {
  const Json* containers =
      pod_template_spec != nullptr ? FindAt(*pod_template_spec, {"containers"}) : nullptr;
  return containers != nullptr && containers->is_array() && !containers->empty() ? &(*containers)[0]
                                                                                 : nullptr;
}

std::string FirstContainerName(const Json& pod) {
  const Json& containers = ArrayRefAt(pod, {"spec", "containers"});
  return containers.empty() ? "" : StringAt(containers[0], "name");
}

// The first pod of an indexed batch Job (or of one that is not indexed).
bool FirstOfIndex(const Json& pod) {
  std::string index = Label(pod, kBatchCompletionIndex);
  return index.empty() || index == "0";
}

}  // namespace

JobShape TrainingJobShape(const KindInfo& info) {
  std::string field(info.replica_field);
  std::string default_container(info.default_container);
  return {.pod_job_label = std::string(kLabelJobName),
          .pod_role_label = std::string(kLabelReplicaType),
          .suspend_path = {"spec", "runPolicy", "suspend"},
          .pod_templates =
              [field](Json& job) {
                std::vector<Json*> templates;
                Json* roles = FindAt(job, {"spec", field.c_str()});
                if (roles == nullptr || !roles->is_object()) return templates;
                for (auto& [type, replica] : roles->items())
                  templates.push_back(&replica["template"]);
                return templates;
              },
          .main_container = [field](const Json& job) -> const Json* {
            const Json* roles = FindAt(job, {"spec", field.c_str()});
            if (roles == nullptr || !roles->is_object() || roles->empty()) return nullptr;
            for (const char* master : {"Master", "Chief", "Launcher"}) {
              if (roles->contains(master))
                return FirstContainer(FindAt((*roles)[master], {"template", "spec"}));
            }
            return FirstContainer(FindAt(roles->begin().value(), {"template", "spec"}));
          },
          // The master's: the kind's own container (pytorch, tensorflow, ...),
          // else its first.
          .metrics_container = [default_container](const Json&, const Json& pod) -> std::string {
            if (Label(pod, kLabelJobRole) != "master") return "";
            for (const Json& c : ArrayRefAt(pod, {"spec", "containers"})) {
              if (StringAt(c, "name") == default_container) return default_container;
            }
            return FirstContainerName(pod);
          },
          .trial_success_condition = "Succeeded",
          .trial_primary_pod_labels = {{std::string(kLabelJobRole), "master"}}};
}

JobShape BatchJobShape() {
  return {.pod_job_label = std::string(kBatchJobNameLabel),
          .suspend_path = {"spec", "suspend"},
          .pod_templates =
              [](Json& job) {
                Json* spec = FindAt(job, {"spec"});
                return spec != nullptr && spec->contains("template")
                           ? std::vector<Json*>{&(*spec)["template"]}
                           : std::vector<Json*>{};
              },
          .main_container = [](const Json& job) -> const Json* {
            return FirstContainer(FindAt(job, {"spec", "template", "spec"}));
          },
          .metrics_container = [](const Json&, const Json& pod) -> std::string {
            return FirstOfIndex(pod) ? FirstContainerName(pod) : "";
          },
          .trial_success_condition = "Complete"};
}

JobShape JobSetShape() {
  return {.pod_job_label = std::string(kJobSetNameLabel),
          .pod_role_label = std::string(kReplicatedJobNameLabel),
          .pod_owner_kinds = {"Job"},
          .child_jobs_status = "replicatedJobsStatus",
          .suspend_path = {"spec", "suspend"},
          .pod_templates =
              [](Json& job) {
                std::vector<Json*> templates;
                Json* rjobs = FindAt(job, {"spec", "replicatedJobs"});
                if (rjobs == nullptr || !rjobs->is_array()) return templates;
                for (Json& rjob : *rjobs) {
                  if (Json* t = FindAt(rjob, {"template", "spec", "template"}))
                    templates.push_back(t);
                }
                return templates;
              },
          .main_container = [](const Json& job) -> const Json* {
            const Json& rjobs = ArrayRefAt(job, {"spec", "replicatedJobs"});
            if (rjobs.empty()) return nullptr;
            return FirstContainer(FindAt(rjobs[0], {"template", "spec", "template", "spec"}));
          },
          // Its first replicated job's first Job's (job-index 0) first pod.
          .metrics_container = [](const Json& job, const Json& pod) -> std::string {
            const Json& rjobs = ArrayRefAt(job, {"spec", "replicatedJobs"});
            std::string first = rjobs.empty() ? "" : StringAt(rjobs[0], "name");
            bool primary = Label(pod, kReplicatedJobNameLabel) == first &&
                           Label(pod, kJobIndexLabel) == "0" && FirstOfIndex(pod);
            return primary ? FirstContainerName(pod) : "";
          }};
}

JobShape TrainJobShape() {
  return {.pod_job_label = std::string(kJobSetNameLabel),  // its JobSet's name is its own
          .pod_role_label = std::string(kReplicatedJobNameLabel),
          .pod_owner_kinds = {"JobSet", "Job"},
          .child_jobs_status = "jobsStatus",
          .suspend_path = {"spec", "suspend"},
          // Its pods come from its runtime: a trial's variables reach its
          // trainer's node container through the TrainJob's own env.
          .trial_env_path = {"spec", "trainer", "env"},
          .pod_templates = [](Json&) { return std::vector<Json*>{}; },
          .main_container =
              [](const Json& job) {
                return FindAt(job, {"spec", "trainer"});
              },
          // Node 0 of its `node` job (Katib's primary pod of one).
          .metrics_container = [](const Json&, const Json& pod) -> std::string {
            bool primary = Label(pod, kReplicatedJobNameLabel) == kNodeContainer &&
                           Label(pod, kBatchCompletionIndex) == "0";
            return primary ? std::string(kNodeContainer) : "";
          },
          .trial_success_condition = "Complete",
          .trial_primary_pod_labels = {{std::string(kReplicatedJobNameLabel),
                                        std::string(kNodeContainer)},
                                       {std::string(kBatchCompletionIndex), "0"}},
          .fixed_primary_container = std::string(kNodeContainer)};
}

}  // namespace trainyard::api
