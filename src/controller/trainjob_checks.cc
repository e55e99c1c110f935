// What a TrainJob asks that its runtime cannot give, found before anything
// is built, with upstream's messages at the TrainJob's paths.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "api/well_known.h"
#include "controller/trainjob_build.h"
#include "controller/trainjob_policies.h"

namespace trainyard::controller {
namespace {

const api::ReplicatedJob* StepJob(const api::JobSetSpec& spec, std::string_view step) {
  for (const api::ReplicatedJob& job : spec.replicated_jobs) {
    auto it = job.template_.metadata.labels.find(std::string(api::kAncestorStepLabel));
    if (it != job.template_.metadata.labels.end() && it->second == step) return &job;
  }
  return nullptr;
}

bool HasContainer(const std::vector<api::Container>& containers, std::string_view name) {
  return std::any_of(containers.begin(), containers.end(),
                     [&](const api::Container& c) { return c.name == name; });
}

// An initializer the TrainJob configures needs its step, and the step its container.
void CheckInitializer(const api::JobSetSpec& spec, std::string_view step, const char* config,
                      FieldErrors& errors) {
  FieldPath ref = FieldPath("spec").Child("runtimeRef");
  const api::ReplicatedJob* job = StepJob(spec, step);
  if (job == nullptr) {
    errors.push_back(FieldError::InvalidRendered(
        ref, "",
        fmt::format("must have {} job when trainJob is configured with input {}", step, config)));
  } else if (!HasContainer(job->template_.spec.template_.spec.containers, step)) {
    errors.push_back(FieldError::InvalidRendered(
        ref, "", fmt::format("must have container with name - {} in the {} job", step, step)));
  }
}

void CheckContainerPatches(const std::vector<api::ContainerPatch>& patches,
                           const std::vector<api::Container>& runtime, const char* what,
                           const std::string& job, const FieldPath& path, FieldErrors& errors) {
  for (size_t i = 0; i < patches.size(); ++i) {
    FieldPath at = path.Index(static_cast<int64_t>(i));
    if (!HasContainer(runtime, patches[i].name)) {
      errors.push_back(FieldError::Invalid(
          at.Child("name"), patches[i].name,
          fmt::format("must not have {} that doesn't exist in the runtime job {}", what, job)));
    }
    bool step = patches[i].name == api::kNodeContainer ||
                patches[i].name == api::kAncestorDatasetInitializer ||
                patches[i].name == api::kAncestorModelInitializer;
    if (step && !patches[i].env.empty()) {
      errors.push_back(FieldError::InvalidRendered(
          at.Child("env"), "",
          "must not have envs for the dataset-initializer, model-initializer, node containers"));
    }
  }
}

void CheckPatches(const TrainJobSource& job, const api::JobSetSpec& spec, FieldErrors& errors) {
  for (size_t p = 0; p < job.spec.runtime_patches.size(); ++p) {
    const api::RuntimePatch& patch = job.spec.runtime_patches[p];
    if (!patch.training_runtime_spec || !patch.training_runtime_spec->template_ ||
        !patch.training_runtime_spec->template_->spec) {
      continue;
    }
    FieldPath jobs_path = FieldPath("spec")
                              .Child("runtimePatches")
                              .Index(static_cast<int64_t>(p))
                              .Child("trainingRuntimeSpec")
                              .Child("template")
                              .Child("spec")
                              .Child("replicatedJobs");
    const auto& rjobs = patch.training_runtime_spec->template_->spec->replicated_jobs;
    for (size_t j = 0; j < rjobs.size(); ++j) {
      FieldPath at = jobs_path.Index(static_cast<int64_t>(j));
      auto runtime_job =
          std::find_if(spec.replicated_jobs.begin(), spec.replicated_jobs.end(),
                       [&](const api::ReplicatedJob& r) { return r.name == rjobs[j].name; });
      if (runtime_job == spec.replicated_jobs.end()) {
        errors.push_back(FieldError::Invalid(
            at.Child("name"), rjobs[j].name,
            "must not have replicated job that doesn't exist in the runtime job template"));
        continue;
      }
      const auto& t = rjobs[j].template_;
      if (!t || !t->spec || !t->spec->template_ || !t->spec->template_->spec) continue;
      const api::PodSpecPatch& pod = *t->spec->template_->spec;
      const api::PodSpec& runtime_pod = runtime_job->template_.spec.template_.spec;
      FieldPath pod_path = at.Child("template").Child("spec").Child("template").Child("spec");
      CheckContainerPatches(pod.init_containers, runtime_pod.init_containers, "initContainer",
                            rjobs[j].name, pod_path.Child("initContainers"), errors);
      CheckContainerPatches(pod.containers, runtime_pod.containers, "container", rjobs[j].name,
                            pod_path.Child("containers"), errors);
    }
  }
}

void CheckReservedEnv(const TrainJobSource& job, const api::MlPolicy& policy, FieldErrors& errors) {
  if (!job.spec.trainer) return;
  std::vector<std::string> reserved = ReservedEnv(policy);
  FieldPath env_path = FieldPath("spec").Child("trainer").Child("env");
  std::set<std::string> used;
  for (size_t i = 0; i < job.spec.trainer->env.size(); ++i) {
    const std::string& name = job.spec.trainer->env[i].name;
    if (std::find(reserved.begin(), reserved.end(), name) == reserved.end()) continue;
    if (policy.xgboost) {
      errors.push_back(FieldError::Forbidden(env_path.Index(static_cast<int64_t>(i)),
                                             name + " is reserved for the XGBoost runtime"));
    }
    used.insert(name);
  }
  if (!policy.xgboost && !used.empty()) {
    errors.push_back(FieldError::InvalidRendered(
        env_path, "",
        fmt::format("must not have reserved envs, invalid envs configured: [{}]",
                    fmt::join(used, " "))));
  }
}

}  // namespace

FieldErrors CheckAgainstRuntime(const TrainJobSource& job, const RuntimeSource& runtime) {
  FieldErrors errors;
  const api::JobSetSpec& spec = runtime.spec.template_.spec;
  if (job.spec.initializer && job.spec.initializer->dataset) {
    CheckInitializer(spec, api::kAncestorDatasetInitializer, "datasetConfig", errors);
  }
  if (job.spec.initializer && job.spec.initializer->model) {
    CheckInitializer(spec, api::kAncestorModelInitializer, "modelConfig", errors);
  }
  CheckPatches(job, spec, errors);
  api::MlPolicy policy = runtime.spec.ml_policy.value_or(api::MlPolicy{});
  CheckReservedEnv(job, policy, errors);
  if (policy.flux) {
    errors.push_back(FieldError::InvalidRendered(
        FieldPath("spec").Child("runtimeRef"), "",
        "trainyard does not build Flux's JobSet yet: use a runtime with a torch, MPI, JAX or "
        "XGBoost policy"));
  }
  if (policy.mpi && policy.mpi->run_launcher_as_node.value_or(false) && job.spec.trainer &&
      job.spec.trainer->num_nodes.value_or(1) >= 2) {
    bool launcher = false, node = false;
    for (const api::ReplicatedJob& r : spec.replicated_jobs) {
      launcher = launcher || r.name == api::kLauncherJob;
      node = node || r.name == api::kNodeContainer;
    }
    if (!launcher || !node) {
      errors.push_back(FieldError::Invalid(
          FieldPath("spec").Child("trainer").Child("numNodes"), *job.spec.trainer->num_nodes,
          "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have "
          "either launcher and node"));
    }
  }
  return errors;
}

}  // namespace trainyard::controller
