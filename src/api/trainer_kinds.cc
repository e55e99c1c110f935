// Trainer v2's kinds and JobSet: defaults as their CRDs and webhooks set
// them, and their rules: the CRDs' schema and CEL rules, the runtime
// webhook's ancestor-step rules, JobSet's webhook rules, with upstream's
// messages.
#include "api/trainer_kinds.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <regex>
#include <set>

#include "api/core_hooks.h"
#include "api/names.h"
#include "api/validation_internal.h"
#include "api/well_known.h"
#include "common/strings.h"

namespace trainyard::api {
namespace {

using internal::CheckMaxItems;
using internal::CheckMin;

// The limits the CRDs' schemas set on list lengths.
constexpr size_t kMaxEnv = 128;
constexpr size_t kMaxRuntimePatches = 16;
constexpr size_t kMaxDependsOn = 5;

bool In(std::string_view value, std::initializer_list<std::string_view> values) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// --- TrainJob ---

}  // namespace

void DefaultTrainJobSpec(TrainJobSpec& spec) {
  if (spec.runtime_ref.api_group.empty()) spec.runtime_ref.api_group = std::string(kTrainerGroup);
  if (spec.runtime_ref.kind.empty()) spec.runtime_ref.kind = "ClusterTrainingRuntime";
  if (!spec.suspend) spec.suspend = false;
  if (!spec.managed_by) spec.managed_by = std::string(kTrainJobController);
}

namespace {

void DefaultTrainJob(TrainJob& job) { DefaultTrainJobSpec(job.spec); }

void ValidateInitializerSource(const InitializerSource& source, const FieldPath& path,
                               ValidationResult& out) {
  // The CRD's rule: a scheme, "://", then something.
  static const std::regex kUri("^[A-Za-z][A-Za-z0-9+.-]*://.+$");
  if (!source.storage_uri.empty() && !std::regex_match(source.storage_uri, kUri)) {
    out.errors.push_back(
        FieldError::Invalid(path.Child("storageUri"), source.storage_uri,
                            "storageUri may be empty, or it must be a valid URI (scheme://...)"));
  }
  CheckMaxItems(source.env.size(), kMaxEnv, path.Child("env"), out);
  internal::ValidateEnv(source.env, path.Child("env"), out);
}

// numProcPerNode: an integer of at least 1, or (as v2.0 and v2.1 took it)
// auto, cpu or gpu.
void ValidateProcsPerNode(const Json& procs, const FieldPath& path, ValidationResult& out) {
  if (procs.is_number_integer()) {
    int64_t n = procs.get<int64_t>();
    if (n < 1 || n > std::numeric_limits<int32_t>::max()) {
      out.errors.push_back(
          FieldError::Invalid(path, n,
                              n < 1 ? "numProcPerNode must be greater than or equal to 1"
                                    : "must be less than or equal to 2147483647"));
    }
  } else if (procs.is_string()) {
    if (!In(procs.get<std::string>(), {"auto", "cpu", "gpu"})) {
      out.errors.push_back(FieldError::NotSupported(path, procs.get<std::string>(),
                                                    {"auto", "cpu", "gpu", "an integer"}));
    }
  } else if (!procs.is_null()) {
    out.errors.push_back(FieldError::InvalidRendered(path, RenderValue(procs),
                                                     "must be an integer, or auto, cpu or gpu"));
  }
}

// Only labels and annotations of a template's metadata may be patched, as upstream's schema says.
void ForbidPatchedIdentity(const EmbeddedMeta& meta, const FieldPath& path, ValidationResult& out) {
  if (!meta.name.empty() || !meta.namespace_.empty() || !meta.finalizers.empty()) {
    out.errors.push_back(FieldError::Forbidden(
        path, "a runtime patch may set only labels and annotations of this metadata"));
  }
}

void ValidateTrainer(const TrainerSpec& trainer, const FieldPath& path, ValidationResult& out) {
  CheckMin(trainer.num_nodes, 0, path.Child("numNodes"), out);
  // The trainer's Indexed Job runs one pod per node.
  if (trainer.num_nodes && *trainer.num_nodes > internal::kMaxIndexedPods) {
    out.errors.push_back(FieldError::Invalid(
        path.Child("numNodes"), *trainer.num_nodes,
        fmt::format("must be less than or equal to {}", internal::kMaxIndexedPods)));
  }
  CheckMaxItems(trainer.command.size(), kMaxEnv, path.Child("command"), out);
  CheckMaxItems(trainer.args.size(), kMaxEnv, path.Child("args"), out);
  CheckMaxItems(trainer.env.size(), kMaxEnv, path.Child("env"), out);
  internal::ValidateEnv(trainer.env, path.Child("env"), out);
  ValidateProcsPerNode(trainer.num_proc_per_node, path.Child("numProcPerNode"), out);
  if (trainer.resources_per_node) {
    internal::ValidateResourceList(trainer.resources_per_node->limits,
                                   path.Child("resourcesPerNode").Child("limits"), out);
    internal::ValidateResourceList(trainer.resources_per_node->requests,
                                   path.Child("resourcesPerNode").Child("requests"), out);
  }
}

void ValidateContainerPatches(const std::vector<ContainerPatch>& containers, const FieldPath& path,
                              ValidationResult& out) {
  std::set<std::string> names;
  for (size_t i = 0; i < containers.size(); ++i) {
    FieldPath at = path.Index(static_cast<int64_t>(i));
    if (containers[i].name.empty()) out.errors.push_back(FieldError::Required(at.Child("name")));
    if (!names.insert(containers[i].name).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("name"), containers[i].name));
    }
    CheckMaxItems(containers[i].env.size(), kMaxEnv, at.Child("env"), out);
    internal::ValidateEnv(containers[i].env, at.Child("env"), out);
  }
}

void ValidateRuntimePatch(const RuntimePatch& patch, const FieldPath& path, ValidationResult& out) {
  if (patch.manager.empty()) out.errors.push_back(FieldError::Required(path.Child("manager")));
  if (!patch.training_runtime_spec || !patch.training_runtime_spec->template_) return;
  const JobSetTemplatePatch& jobset = *patch.training_runtime_spec->template_;
  FieldPath jobset_path = path.Child("trainingRuntimeSpec").Child("template");
  internal::ValidateLabels(jobset.metadata.labels, jobset_path.Child("metadata").Child("labels"),
                           out);
  ForbidPatchedIdentity(jobset.metadata, jobset_path.Child("metadata"), out);
  if (!jobset.spec) return;
  std::set<std::string> names;
  const std::vector<ReplicatedJobPatch>& jobs = jobset.spec->replicated_jobs;
  for (size_t i = 0; i < jobs.size(); ++i) {
    FieldPath at = jobset_path.Child("spec").Child("replicatedJobs").Index(static_cast<int64_t>(i));
    if (jobs[i].name.empty()) out.errors.push_back(FieldError::Required(at.Child("name")));
    if (!names.insert(jobs[i].name).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("name"), jobs[i].name));
    }
    if (!jobs[i].template_ || !jobs[i].template_->spec || !jobs[i].template_->spec->template_) {
      continue;
    }
    const PodTemplatePatch& pod = *jobs[i].template_->spec->template_;
    FieldPath pod_path = at.Child("template").Child("spec").Child("template");
    internal::ValidateLabels(pod.metadata.labels, pod_path.Child("metadata").Child("labels"), out);
    ForbidPatchedIdentity(pod.metadata, pod_path.Child("metadata"), out);
    ForbidPatchedIdentity(jobs[i].template_->metadata, at.Child("template").Child("metadata"), out);
    if (!pod.spec) continue;
    FieldPath spec_path = pod_path.Child("spec");
    std::set<std::string> volumes;
    internal::ValidateVolumes(pod.spec->volumes, spec_path.Child("volumes"), volumes, out);
    ValidateContainerPatches(pod.spec->init_containers, spec_path.Child("initContainers"), out);
    ValidateContainerPatches(pod.spec->containers, spec_path.Child("containers"), out);
    internal::ValidateLabels(pod.spec->node_selector, spec_path.Child("nodeSelector"), out);
    internal::ValidateTolerations(pod.spec->tolerations, spec_path.Child("tolerations"), out);
    CheckMin(pod.spec->termination_grace_period_seconds, 0,
             spec_path.Child("terminationGracePeriodSeconds"), out);
  }
}

}  // namespace

void ValidateTrainJobSpec(const TrainJobSpec& spec, const FieldPath& path, ValidationResult& out) {
  FieldPath ref = path.Child("runtimeRef");
  if (spec.runtime_ref.name.empty()) out.errors.push_back(FieldError::Required(ref.Child("name")));
  if (spec.runtime_ref.api_group != kTrainerGroup) {
    out.errors.push_back(FieldError::NotSupported(ref.Child("apiGroup"), spec.runtime_ref.api_group,
                                                  {std::string(kTrainerGroup)}));
  }
  if (!In(spec.runtime_ref.kind, {"ClusterTrainingRuntime", "TrainingRuntime"})) {
    out.errors.push_back(FieldError::NotSupported(ref.Child("kind"), spec.runtime_ref.kind,
                                                  {"ClusterTrainingRuntime", "TrainingRuntime"}));
  }
  if (spec.managed_by && !In(*spec.managed_by, {kTrainJobController, kMultiKueueController})) {
    out.errors.push_back(FieldError::Invalid(
        path.Child("managedBy"), *spec.managed_by,
        "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue "
        "if set"));
  }
  CheckMin(spec.active_deadline_seconds, 1, path.Child("activeDeadlineSeconds"), out);
  if (spec.initializer) {
    FieldPath init = path.Child("initializer");
    if (spec.initializer->dataset) {
      ValidateInitializerSource(*spec.initializer->dataset, init.Child("dataset"), out);
    }
    if (spec.initializer->model) {
      ValidateInitializerSource(*spec.initializer->model, init.Child("model"), out);
    }
  }
  if (spec.trainer) ValidateTrainer(*spec.trainer, path.Child("trainer"), out);
  FieldPath patches = path.Child("runtimePatches");
  CheckMaxItems(spec.runtime_patches.size(), kMaxRuntimePatches, patches, out);
  std::set<std::string> managers;
  for (size_t i = 0; i < spec.runtime_patches.size(); ++i) {
    FieldPath at = patches.Index(static_cast<int64_t>(i));
    ValidateRuntimePatch(spec.runtime_patches[i], at, out);
    if (!managers.insert(spec.runtime_patches[i].manager).second) {
      out.errors.push_back(
          FieldError::Duplicate(at.Child("manager"), spec.runtime_patches[i].manager));
    }
  }
}

namespace {

void ValidateTrainJob(const TrainJob& job, ValidationResult& out) {
  ValidateTrainJobSpec(job.spec, FieldPath("spec"), out);
}

// --- JobSet ---

// What JobSet's CRD defaults, in a runtime's template and a JobSet alike.
void DefaultJobSetSchema(JobSetSpec& spec) {
  for (ReplicatedJob& job : spec.replicated_jobs) {
    if (job.group_name.empty()) job.group_name = "default";
    if (!job.replicas) job.replicas = 1;
  }
  if (spec.failure_policy && spec.failure_policy->restart_strategy.empty()) {
    spec.failure_policy->restart_strategy = "Recreate";
  }
}

// What JobSet's mutating webhook adds to a JobSet it admits.
void DefaultJobSet(JobSet& jobset) {
  JobSetSpec& spec = jobset.spec;
  DefaultJobSetSchema(spec);
  if (!spec.success_policy) spec.success_policy = JobSetSuccessPolicy{.operator_ = "All"};
  if (!spec.startup_policy) {
    spec.startup_policy = JobSetStartupPolicy{.startup_policy_order = "AnyOrder"};
  }
  if (!spec.network) spec.network = JobSetNetwork{};
  if (!spec.network->enable_dns_hostnames) spec.network->enable_dns_hostnames = true;
  for (ReplicatedJob& job : spec.replicated_jobs) {
    BatchJobSpec& batch = job.template_.spec;
    if (!batch.completion_mode) batch.completion_mode = "Indexed";
    // batch/v1's default: a Job that sets neither runs one pod to one completion.
    if (!batch.parallelism && !batch.completions) batch.parallelism = batch.completions = 1;
    if (batch.template_.spec.restart_policy.empty()) {
      batch.template_.spec.restart_policy = "OnFailure";
    }
  }
}

void ValidateDependsOn(const std::vector<ReplicatedJob>& jobs, size_t index, const FieldPath& at,
                       ValidationResult& out) {
  const std::vector<DependsOn>& depends = jobs[index].depends_on;
  CheckMaxItems(depends.size(), kMaxDependsOn, at.Child("dependsOn"), out);
  for (size_t d = 0; d < depends.size(); ++d) {
    FieldPath dep = at.Child("dependsOn").Index(static_cast<int64_t>(d));
    if (!In(depends[d].status, {"Ready", "Complete"})) {
      out.errors.push_back(
          FieldError::NotSupported(dep.Child("status"), depends[d].status, {"Ready", "Complete"}));
    }
    // JobSet's rule: a replicated job depends only on ones listed before it,
    // so the order is a sequence and never a cycle.
    bool earlier = std::any_of(jobs.begin(), jobs.begin() + static_cast<ptrdiff_t>(index),
                               [&](const ReplicatedJob& j) { return j.name == depends[d].name; });
    if (!earlier) {
      out.errors.push_back(
          FieldError::Invalid(dep.Child("name"), depends[d].name,
                              "replicatedJob must depend on one of the previous replicatedJobs"));
    }
  }
}

void ValidateClaimPolicies(const std::vector<VolumeClaimPolicy>& policies, const FieldPath& path,
                           ValidationResult& out) {
  CheckMaxItems(policies.size(), 50, path, out);
  for (size_t p = 0; p < policies.size(); ++p) {
    FieldPath at = path.Index(static_cast<int64_t>(p));
    std::string when = StringAt(policies[p].retention_policy, "whenDeleted");
    if (!when.empty() && !In(when, {"Delete", "Retain"})) {
      out.errors.push_back(FieldError::NotSupported(
          at.Child("retentionPolicy").Child("whenDeleted"), when, {"Delete", "Retain"}));
    }
    CheckMaxItems(policies[p].templates.size(), 50, at.Child("templates"), out);
    for (size_t t = 0; t < policies[p].templates.size(); ++t) {
      FieldPath name =
          at.Child("templates").Index(static_cast<int64_t>(t)).Child("metadata").Child("name");
      const std::string& claim = policies[p].templates[t].metadata.name;
      if (claim.empty()) out.errors.push_back(FieldError::Required(name));
      for (const std::string& problem : Dns1123LabelProblems(claim.empty() ? "x" : claim)) {
        out.errors.push_back(FieldError::Invalid(name, claim, problem));
      }
    }
  }
}

// The rules of a JobSetSpec at `path`, a JobSet's or a runtime template's.
void ValidateJobSetSpec(const JobSetSpec& spec, const FieldPath& path,
                        const internal::PodTemplateRules& pod_rules, ValidationResult& out) {
  FieldPath jobs_path = path.Child("replicatedJobs");
  if (spec.replicated_jobs.empty()) out.errors.push_back(FieldError::Required(jobs_path));
  std::set<std::string> names;
  bool depends = false;
  for (size_t i = 0; i < spec.replicated_jobs.size(); ++i) {
    const ReplicatedJob& job = spec.replicated_jobs[i];
    FieldPath at = jobs_path.Index(static_cast<int64_t>(i));
    for (const std::string& p : Dns1035LabelProblems(job.name)) {
      out.errors.push_back(FieldError::Invalid(at.Child("name"), job.name, p));
    }
    if (!names.insert(job.name).second) {
      out.errors.push_back(FieldError::Duplicate(at.Child("name"), job.name));
    }
    CheckMin(job.replicas, 0, at.Child("replicas"), out);
    ValidateDependsOn(spec.replicated_jobs, i, at, out);
    depends = depends || !job.depends_on.empty();
    internal::ValidateLabels(job.template_.metadata.labels,
                             at.Child("template").Child("metadata").Child("labels"), out);
    // The claims of volumeClaimPolicies are volumes of every pod that mounts them.
    BatchJobSpec with_claims = job.template_.spec;
    for (const VolumeClaimPolicy& policy : spec.volume_claim_policies) {
      for (const ClaimTemplate& claim : policy.templates) {
        with_claims.template_.spec.volumes.push_back(
            {.name = claim.metadata.name,
             .persistent_volume_claim =
                 PersistentVolumeClaimVolumeSource{.claim_name = claim.metadata.name}});
      }
    }
    internal::ValidateBatchJobSpec(with_claims, at.Child("template").Child("spec"), pod_rules, out);
  }
  // trainyard's bound on what one JobSet makes: its Jobs' pods together.
  int64_t pods = 0;  // stops growing past the bound, so it never overflows
  for (const ReplicatedJob& job : spec.replicated_jobs) {
    if (pods > internal::kMaxIndexedPods) break;
    pods += std::min<int64_t>(job.replicas.value_or(1), internal::kMaxIndexedPods + 1) *
            std::clamp<int64_t>(job.template_.spec.parallelism.value_or(1), 1,
                                internal::kMaxIndexedPods + 1);
  }
  if (pods > internal::kMaxIndexedPods) {
    out.errors.push_back(
        FieldError::InvalidRendered(jobs_path, "",
                                    fmt::format("its Jobs would run {} pods together: at most {}",
                                                pods, internal::kMaxIndexedPods)));
  }
  if (depends && spec.startup_policy && spec.startup_policy->startup_policy_order == "InOrder") {
    out.errors.push_back(FieldError::Invalid(path.Child("startupPolicy"), "InOrder",
                                             "StartupPolicy and DependsOn APIs are mutually "
                                             "exclusive"));
  }
  if (spec.success_policy) {
    FieldPath sp = path.Child("successPolicy");
    if (!In(spec.success_policy->operator_, {"All", "Any"})) {
      out.errors.push_back(FieldError::NotSupported(
          sp.Child("operator"), spec.success_policy->operator_, {"All", "Any"}));
    }
    for (const std::string& target : spec.success_policy->target_replicated_jobs) {
      if (!names.contains(target)) {
        out.errors.push_back(FieldError::Invalid(sp.Child("targetReplicatedJobs"), target,
                                                 "invalid replicatedJob name does not appear "
                                                 "in .spec.ReplicatedJobs"));
      }
    }
  }
  if (spec.failure_policy) {
    FieldPath fp = path.Child("failurePolicy");
    CheckMin(spec.failure_policy->max_restarts, 0, fp.Child("maxRestarts"), out);
    // JobSet's other strategies and its one-Job restarts are not run here:
    // refused with what is, rather than run as something else.
    if (spec.failure_policy->restart_strategy != "Recreate") {
      out.errors.push_back(FieldError::NotSupported(
          fp.Child("restartStrategy"), spec.failure_policy->restart_strategy, {"Recreate"}));
    }
    for (size_t r = 0; r < spec.failure_policy->rules.size(); ++r) {
      const JobSetFailureRule& rule = spec.failure_policy->rules[r];
      FieldPath at = fp.Child("rules").Index(static_cast<int64_t>(r));
      static const std::vector<std::string> kActions = {"FailJobSet", "RestartJobSet",
                                                        "RestartJobSetAndIgnoreMaxRestarts"};
      if (std::find(kActions.begin(), kActions.end(), rule.action) == kActions.end()) {
        out.errors.push_back(FieldError::NotSupported(at.Child("action"), rule.action, kActions));
      }
      if (rule.name.empty()) out.errors.push_back(FieldError::Required(at.Child("name")));
    }
  }
  CheckMin(spec.ttl_seconds_after_finished, 0, path.Child("ttlSecondsAfterFinished"), out);
  ValidateClaimPolicies(spec.volume_claim_policies, path.Child("volumeClaimPolicies"), out);
}

// The names a JobSet gives its Jobs (`<jobset>-<job>-<index>`) and their
// pods' hosts (`<job name>-<index>`) are DNS labels, as JobSet's webhook
// checks: a JobSet whose longest would not be is refused.
void ValidateChildNames(const std::string& jobset, const JobSetSpec& spec, ValidationResult& out) {
  for (size_t i = 0; i < spec.replicated_jobs.size(); ++i) {
    const ReplicatedJob& job = spec.replicated_jobs[i];
    std::string longest = fmt::format("{}-{}-{}", jobset, job.name,
                                      std::max<int64_t>(0, job.replicas.value_or(1) - 1));
    std::string host = fmt::format(
        "{}-{}", longest, std::max<int64_t>(0, job.template_.spec.completions.value_or(1) - 1));
    for (const std::string& name : {longest, host}) {
      if (name.size() <= 63) continue;
      out.errors.push_back(FieldError::Invalid(
          FieldPath("spec").Child("replicatedJobs").Index(static_cast<int64_t>(i)).Child("name"),
          job.name,
          fmt::format("{} would be longer than 63 characters: shorten the JobSet's name or this "
                      "one",
                      name == host ? "its pods' host name " + name : "its Job's name " + name)));
      break;
    }
  }
}

void ValidateJobSet(const JobSet& jobset, ValidationResult& out) {
  ValidateJobSetSpec(jobset.spec, FieldPath("spec"),
                     {.restart_policies = {"OnFailure", "Never"}, .restart_policy_required = true},
                     out);
  ValidateChildNames(jobset.metadata.name, jobset.spec, out);
}

// --- TrainingRuntime and ClusterTrainingRuntime ---

void DefaultRuntime(TrainingRuntimeFields& runtime) {
  TrainingRuntimeSpec& spec = runtime.spec;
  DefaultJobSetSchema(spec.template_.spec);
  if (spec.ml_policy && spec.ml_policy->mpi) {
    MpiPolicy& mpi = *spec.ml_policy->mpi;
    if (!mpi.num_proc_per_node) mpi.num_proc_per_node = 1;
    if (mpi.mpi_implementation.empty()) mpi.mpi_implementation = "OpenMPI";
    if (mpi.ssh_auth_mount_path.empty()) mpi.ssh_auth_mount_path = "/root/.ssh";
    if (!mpi.run_launcher_as_node) mpi.run_launcher_as_node = false;
  }
  if (spec.ml_policy && spec.ml_policy->flux && !spec.ml_policy->flux->num_proc_per_node) {
    spec.ml_policy->flux->num_proc_per_node = 1;
  }
  if (spec.pod_group_policy && spec.pod_group_policy->coscheduling &&
      !spec.pod_group_policy->coscheduling->schedule_timeout_seconds) {
    spec.pod_group_policy->coscheduling->schedule_timeout_seconds = 60;
  }
}

void ValidateMlPolicy(const MlPolicy& policy, const FieldPath& path, ValidationResult& out) {
  int policies = (policy.torch ? 1 : 0) + (policy.mpi ? 1 : 0) + (policy.jax ? 1 : 0) +
                 (policy.xgboost ? 1 : 0) + (policy.flux ? 1 : 0);
  if (policies > 1) {
    out.errors.push_back(
        FieldError::InvalidRendered(path, "", "Only one of the policy can be configured"));
  }
  CheckMin(policy.num_nodes, 1, path.Child("numNodes"), out);
  if (policy.mpi) {
    FieldPath mpi = path.Child("mpi");
    if (policy.mpi->num_proc_per_node && *policy.mpi->num_proc_per_node < 1) {
      out.errors.push_back(FieldError::Invalid(mpi.Child("numProcPerNode"),
                                               *policy.mpi->num_proc_per_node,
                                               "NumProcPerNode in mpiPolicy must be >= 1"));
    }
    if (policy.mpi->mpi_implementation != "OpenMPI") {
      out.errors.push_back(FieldError::NotSupported(mpi.Child("mpiImplementation"),
                                                    policy.mpi->mpi_implementation, {"OpenMPI"}));
    }
  }
  if (policy.flux && policy.flux->num_proc_per_node && *policy.flux->num_proc_per_node < 1) {
    out.errors.push_back(FieldError::Invalid(path.Child("flux").Child("numProcPerNode"),
                                             *policy.flux->num_proc_per_node,
                                             "NumProcPerNode in fluxPolicy must be >= 1"));
  }
  if (policy.torch) {
    ValidateProcsPerNode(policy.torch->num_proc_per_node,
                         path.Child("torch").Child("numProcPerNode"), out);
  }
  if (policy.torch && policy.torch->env_injection) {
    FieldPath targets = path.Child("torch").Child("envInjection").Child("targets");
    const std::vector<TorchEnvTarget>& list = policy.torch->env_injection->targets;
    CheckMaxItems(list.size(), 16, targets, out);
    for (size_t i = 0; i < list.size(); ++i) {
      FieldPath at = targets.Index(static_cast<int64_t>(i));
      if (std::find(list[i].container_names.begin(), list[i].container_names.end(),
                    kNodeContainer) != list[i].container_names.end()) {
        out.errors.push_back(FieldError::Invalid(
            at.Child("containerNames"), "node",
            "containerNames must not include the main node container because PET_* envs are "
            "always injected into it"));
      }
    }
  }
}

// torch's envInjection names containers of the runtime's jobs.
void ValidateInjectionTargets(const MlPolicy& policy, const JobSetSpec& spec, const FieldPath& path,
                              ValidationResult& out) {
  if (!policy.torch || !policy.torch->env_injection) return;
  FieldPath targets = path.Child("mlPolicy").Child("torch").Child("envInjection").Child("targets");
  const std::vector<TorchEnvTarget>& list = policy.torch->env_injection->targets;
  for (size_t i = 0; i < list.size(); ++i) {
    FieldPath at = targets.Index(static_cast<int64_t>(i));
    auto job = std::find_if(spec.replicated_jobs.begin(), spec.replicated_jobs.end(),
                            [&](const ReplicatedJob& r) { return r.name == list[i].job_name; });
    if (job == spec.replicated_jobs.end()) {
      out.errors.push_back(FieldError::NotFound(at.Child("jobName"), list[i].job_name,
                                                "no replicated job of this name in the template"));
      continue;
    }
    const PodSpec& pod = job->template_.spec.template_.spec;
    for (size_t c = 0; c < list[i].container_names.size(); ++c) {
      const std::string& name = list[i].container_names[c];
      bool has = false;
      for (const auto* containers : {&pod.init_containers, &pod.containers}) {
        for (const Container& container : *containers) has = has || container.name == name;
      }
      if (!has) {
        out.errors.push_back(
            FieldError::NotFound(at.Child("containerNames").Index(static_cast<int64_t>(c)), name,
                                 "no container of this name in the job " + list[i].job_name));
      }
    }
  }
}

// Policies trainyard reads but does not act on say so; Flux, which it
// cannot build, is refused.
void WarnUnheededPolicies(const TrainingRuntimeSpec& spec, const FieldPath& path,
                          ValidationResult& out) {
  FieldPath ml = path.Child("mlPolicy");
  if (spec.ml_policy && spec.ml_policy->flux) {
    out.warnings.push_back(ml.Child("flux").ToString() +
                           ": trainyard does not build Flux's JobSet yet: a TrainJob naming this "
                           "runtime fails with that reason");
  }
  if (spec.ml_policy && spec.ml_policy->torch && spec.ml_policy->torch->elastic_policy) {
    out.warnings.push_back(ml.Child("torch").Child("elasticPolicy").ToString() +
                           ": not acted on: a JobSet's Jobs are not elastic (upstream's torch "
                           "plugin does not act on it either); the trainer runs numNodes nodes");
  }
  FieldPath group = path.Child("podGroupPolicy");
  if (spec.pod_group_policy && spec.pod_group_policy->coscheduling) {
    out.warnings.push_back(group.Child("coscheduling").ToString() +
                           ": on one machine the TrainJob's pods are one gang, but no PodGroup "
                           "is made and scheduleTimeoutSeconds is not acted on (on a cluster, "
                           "`trainyard operator --trainer` makes the PodGroup)");
  }
  if (spec.pod_group_policy && spec.pod_group_policy->volcano) {
    out.warnings.push_back(group.Child("volcano").ToString() +
                           ": on one machine the TrainJob's pods are one gang, but no PodGroup "
                           "is made and networkTopology is not acted on (on a cluster, "
                           "`trainyard operator --trainer` makes the PodGroup)");
  }
}

// The runtime webhook's rules for the steps a TrainJob's parts go to: the
// launcher and each labelled step are one Job, whose pods have the step's
// container.
void ValidateAncestorSteps(const JobSetSpec& spec, const FieldPath& path, ValidationResult& out) {
  for (size_t i = 0; i < spec.replicated_jobs.size(); ++i) {
    const ReplicatedJob& job = spec.replicated_jobs[i];
    FieldPath at = path.Child("replicatedJobs").Index(static_cast<int64_t>(i));
    auto step = job.template_.metadata.labels.find(std::string(kAncestorStepLabel));
    bool ancestor = step != job.template_.metadata.labels.end() &&
                    In(step->second,
                       {kAncestorTrainer, kAncestorDatasetInitializer, kAncestorModelInitializer});
    if ((job.name == kLauncherJob || ancestor) && job.replicas.value_or(1) != 1) {
      out.errors.push_back(
          FieldError::Invalid(at.Child("replicas"), *job.replicas, "always must be 1"));
    }
    if (!ancestor) continue;
    std::string container =
        step->second == kAncestorTrainer ? std::string(kNodeContainer) : step->second;
    const std::vector<Container>& containers = job.template_.spec.template_.spec.containers;
    bool has = std::any_of(containers.begin(), containers.end(),
                           [&](const Container& c) { return c.name == container; });
    if (!has) {
      out.errors.push_back(FieldError::InvalidRendered(
          at.Child("template").Child("spec").Child("template").Child("spec").Child("containers"),
          "", "must contain the required container for the ancestor: " + step->second));
    }
  }
}

constexpr int64_t kMaxRuntimeJobName = 20;

void ValidateRuntime(const TrainingRuntimeFields& runtime, ValidationResult& out) {
  const TrainingRuntimeSpec& spec = runtime.spec;
  FieldPath path("spec");
  if (spec.ml_policy) ValidateMlPolicy(*spec.ml_policy, path.Child("mlPolicy"), out);
  if (spec.pod_group_policy && spec.pod_group_policy->coscheduling &&
      spec.pod_group_policy->volcano) {
    out.errors.push_back(FieldError::InvalidRendered(
        path.Child("podGroupPolicy"), "", "only one of coscheduling and volcano may be set"));
  }
  FieldPath template_spec = path.Child("template").Child("spec");
  // A runtime's pods may leave restartPolicy to JobSet's default.
  ValidateJobSetSpec(spec.template_.spec, template_spec,
                     {.restart_policies = {"OnFailure", "Never"}}, out);
  ValidateAncestorSteps(spec.template_.spec, template_spec, out);
  if (spec.ml_policy) ValidateInjectionTargets(*spec.ml_policy, spec.template_.spec, path, out);
  WarnUnheededPolicies(spec, path, out);
  // Trainer v2.4: a runtime's replicated job names are 20 characters at
  // most, so that the hosts JobSet names after them
  // (<trainjob>-<job>-<index>-<index>) stay DNS labels for any TrainJob.
  for (size_t i = 0; i < spec.template_.spec.replicated_jobs.size(); ++i) {
    if (spec.template_.spec.replicated_jobs[i].name.size() <= kMaxRuntimeJobName) continue;
    out.errors.push_back(FieldError::TooLong(
        template_spec.Child("replicatedJobs").Index(static_cast<int64_t>(i)).Child("name"),
        kMaxRuntimeJobName));
  }
}

// The runtime label that marks a deprecated runtime gets a warning, as upstream.
void WarnDeprecatedRuntime(const Object& object, ValidationResult& out) {
  const ObjectMeta& meta = Metadata(object);
  auto it = meta.labels.find(std::string(kRuntimeSupportLabel));
  if (it != meta.labels.end() && it->second == "deprecated") {
    out.warnings.push_back(fmt::format(
        "{} \"{}\" is labelled {}=deprecated: it will be removed in a future release of "
        "Kubeflow Trainer; see https://www.kubeflow.org/docs/components/trainer/operator-guides/"
        "runtime/#runtime-deprecation-policy",
        KindName(object), meta.name, kRuntimeSupportLabel));
  }
}

}  // namespace

ObjectHooks TrainJobHooks() {
  ObjectHooks hooks = internal::ReflectedHooks<TrainJob>(DefaultTrainJob, ValidateTrainJob);
  hooks.validate_update = [](const Object& old_object, const Object& new_object,
                             FieldErrors& errors) {
    for (FieldError& e :
         ValidateTrainJobUpdate(std::get<TrainJob>(old_object), std::get<TrainJob>(new_object))) {
      errors.push_back(std::move(e));
    }
  };
  return hooks;
}

ObjectHooks TrainingRuntimeHooks(std::string kind) {
  ObjectHooks hooks = internal::CoreHooks<TrainingRuntimeFields>(
      std::move(kind), DefaultRuntime, ValidateRuntime, kTrainerGroupVersion);
  hooks.validate = [rules = hooks.validate](const Object& object, ValidationResult& out) {
    rules(object, out);
    WarnDeprecatedRuntime(object, out);
  };
  return hooks;
}

ObjectHooks JobSetHooks() {
  return internal::ReflectedHooks<JobSet>(DefaultJobSet, ValidateJobSet);
}

TrainingRuntimeFields TrainingRuntimeFieldsOf(const Object& object) {
  return internal::TypedFields<TrainingRuntimeFields>(object);
}

FieldErrors ValidateTrainJobUpdate(const TrainJob& old_job, const TrainJob& new_job) {
  FieldErrors errors;
  const TrainJobSpec& before = old_job.spec;
  const TrainJobSpec& after = new_job.spec;
  FieldPath path("spec");
  auto immutable = [&](bool same, const char* field) {
    if (!same)
      errors.push_back(FieldError::InvalidRendered(path.Child(field), "", "field is immutable"));
  };
  // The CRD's rules: what the runtime made from the job never changes under it.
  immutable(before.runtime_ref == after.runtime_ref, "runtimeRef");
  immutable(before.initializer == after.initializer, "initializer");
  immutable(before.trainer == after.trainer, "trainer");
  immutable(before.managed_by == after.managed_by, "managedBy");
  immutable(before.active_deadline_seconds == after.active_deadline_seconds,
            "activeDeadlineSeconds");
  if (before.runtime_patches != after.runtime_patches && !before.suspend.value_or(false) &&
      !after.suspend.value_or(false)) {
    errors.push_back(FieldError::Forbidden(
        path.Child("runtimePatches"),
        "RuntimePatches can only be modified when the TrainJob is suspended before or after the "
        "update"));
  }
  return errors;
}

}  // namespace trainyard::api
