#include "controller/trainjob_build.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/well_known.h"
#include "controller/trainjob_json.h"
#include "controller/trainjob_policies.h"
#include "controller/trainjob_status_endpoint.h"

namespace trainyard::controller {
namespace {

using trainjob::ContainerOf;
using trainjob::EnvValue;
using trainjob::FindNamed;
using trainjob::Json;
using trainjob::PodSpecOf;
using trainjob::UpsertNamed;

std::string SubdomainOf(const TrainJobSource& job, const RuntimeSource& runtime) {
  const auto& network = runtime.spec.template_.spec.network;
  return network && !network->subdomain.empty() ? network->subdomain : job.meta.name;
}

// The runtime's JobSet metadata and spec with each patch applied in turn,
// later patches winning.
void ApplyRuntimePatches(const TrainJobSource& job, Json& metadata, Json& spec) {
  for (const api::RuntimePatch& patch : job.spec.runtime_patches) {
    if (!patch.training_runtime_spec || !patch.training_runtime_spec->template_) continue;
    const api::JobSetTemplatePatch& jobset = *patch.training_runtime_spec->template_;
    Json meta = api::Encode(jobset.metadata);
    for (const char* map : {"labels", "annotations"}) {
      if (meta.contains(map)) trainjob::StrategicMerge(metadata[map], meta[map]);
    }
    if (!jobset.spec) continue;
    for (const api::ReplicatedJobPatch& rjob : jobset.spec->replicated_jobs) {
      Json* target = FindNamed(spec["replicatedJobs"], rjob.name);
      if (target == nullptr || !rjob.template_) continue;  // refused by CheckAgainstRuntime
      trainjob::StrategicMerge((*target)["template"], api::Encode(*rjob.template_));
    }
  }
}

void UpsertEnv(Json& container, const std::vector<api::EnvVar>& env) {
  for (const api::EnvVar& var : env) UpsertNamed(container["env"], api::Encode(var));
}

// Whether `image` is Kubeflow's image for `step` (ghcr.io/kubeflow/trainer/
// dataset-initializer:TAG, or a mirror's of that path); an image of the
// step's name from anyone else has its own program, and runs as written.
bool IsInitializerImage(const std::string& image, const std::string& step) {
  std::string repository = image.substr(0, image.find_first_of("@"));
  size_t tag =
      repository.find(':', repository.rfind('/') == std::string::npos ? 0 : repository.rfind('/'));
  if (tag != std::string::npos) repository.resize(tag);
  std::string kubeflows = "kubeflow/trainer/" + step;
  return repository == kubeflows || repository.ends_with("/" + kubeflows);
}

// An initializer step: one pod, its container told where the data is. On
// one machine Kubeflow's initializer image, whose program is inside it,
// becomes `trainyard initialize`, which does its work here: trainyard's own
// program, so its pod runs on this machine's files (api::kRootAnnotation),
// not in the image.
void BuildInitializer(Json& rjob, const std::string& step,
                      const std::optional<api::InitializerSource>& source,
                      const BuildOptions& options) {
  rjob["replicas"] = 1;
  Json* container = ContainerOf(rjob, step);
  if (container == nullptr) return;
  if (!options.initializer_program.empty() && !container->contains("command") &&
      IsInitializerImage(api::StringAt(*container, "image"), step)) {
    std::string what = step == api::kAncestorDatasetInitializer ? "dataset" : "model";
    (*container)["command"] =
        Json::array({options.initializer_program, "initialize", what, "/workspace/" + what});
    rjob["template"]["spec"]["template"]["metadata"]["annotations"]
        [std::string(api::kRootAnnotation)] = std::string(api::kHostRoot);
    // That insert may have moved the container (an ordered map's vector).
    container = ContainerOf(rjob, step);
  }
  if (!source) return;
  if (!source->storage_uri.empty()) {
    UpsertNamed((*container)["env"], EnvValue("STORAGE_URI", source->storage_uri));
  }
  UpsertEnv(*container, source->env);  // after STORAGE_URI, so the user's wins
  if (source->secret_ref) {
    (*container)["envFrom"].push_back(Json{{"secretRef", {{"name", source->secret_ref->name}}}});
  }
}

// The trainer's resources per node merged over the runtime's, key by key.
void MergeResources(Json& container, const api::ResourceRequirements& per_node) {
  Json resources = api::Encode(per_node);
  for (const char* section : {"requests", "limits"}) {
    if (!resources.contains(section)) continue;
    for (const auto& [name, value] : resources[section].items()) {
      container["resources"][section][name] = value;
    }
  }
}

// The node container of a step that runs the trainer's program or shares its nodes.
void GiveNodeTheTrainer(Json& container, const api::TrainerSpec& trainer, bool program) {
  if (program) {
    if (!trainer.image.empty()) container["image"] = trainer.image;
    if (!trainer.command.empty()) container["command"] = api::Encode(trainer.command);
    if (!trainer.args.empty()) container["args"] = api::Encode(trainer.args);
  }
  if (trainer.resources_per_node) MergeResources(container, *trainer.resources_per_node);
  UpsertEnv(container, trainer.env);
}

void SetPodCount(Json& rjob, int32_t count) {
  Json& spec = rjob["template"]["spec"];
  spec["parallelism"] = count;
  spec["completions"] = count;
}

// The gang policy's mark on every pod: what the gang scheduler groups by.
void MarkGang(const TrainJobSource& job, const api::TrainingRuntimeSpec& runtime, Json& spec) {
  if (!runtime.pod_group_policy) return;
  for (Json& rjob : spec["replicatedJobs"]) {
    Json& meta = rjob["template"]["spec"]["template"]["metadata"];
    if (runtime.pod_group_policy->coscheduling) {
      meta["labels"]["scheduling.x-k8s.io/pod-group"] = job.meta.name;
    } else if (runtime.pod_group_policy->volcano) {
      meta["annotations"]["scheduling.k8s.io/group-name"] = job.meta.name;
    }
  }
}

}  // namespace

Json OwnerReferenceTo(const TrainJobSource& job) {
  return Json{{"apiVersion", std::string(api::kTrainerGroupVersion)},
              {"kind", "TrainJob"},
              {"name", job.meta.name},
              {"uid", job.meta.uid},
              {"controller", true},
              {"blockOwnerDeletion", true}};
}

std::vector<std::string> LocalInitializerProblems(const Json& jobset, const std::string& program) {
  std::vector<std::string> lines;
  if (program.empty()) return lines;
  for (const Json& rjob : api::ArrayRefAt(jobset, {"spec", "replicatedJobs"})) {
    for (const Json& container :
         api::ArrayRefAt(rjob, {"template", "spec", "template", "spec", "containers"})) {
      const Json& command = api::ArrayRefAt(container, {"command"});
      if (command.size() < 4 || command[0] != program || command[1] != "initialize" ||
          !command[3].is_string()) {
        continue;
      }
      std::string at = fmt::format("replicated job {}, container {}", api::StringAt(rjob, "name"),
                                   api::StringAt(container, "name"));
      std::string destination = command[3].get<std::string>();
      bool mounted = false;
      for (const Json& mount : api::ArrayRefAt(container, {"volumeMounts"})) {
        std::string path = api::StringAt(mount, "mountPath");
        while (path.size() > 1 && path.ends_with('/')) path.pop_back();
        mounted = mounted ||
                  (path != "/" && (destination == path || destination.starts_with(path + "/")));
      }
      if (!mounted) {
        lines.push_back(fmt::format(
            "{}: no volume is mounted at {} (or above it), so on this machine the initializer "
            "would write to the machine's own {}, shared by every job; mount one there, as "
            "upstream's runtimes mount their `initializer` volume at /workspace",
            at, destination, destination));
      }
      if (!api::ArrayRefAt(container, {"args"}).empty()) {
        lines.push_back(fmt::format(
            "{}: has args, but on this machine Kubeflow's initializer image runs as `trainyard "
            "initialize`, which takes none; give what it needs in its env (STORAGE_URI)",
            at));
      }
    }
  }
  return lines;
}

const api::ReplicatedJob* TrainerJobOf(const api::JobSetSpec& spec) {
  for (const api::ReplicatedJob& job : spec.replicated_jobs) {
    auto it = job.template_.metadata.labels.find(std::string(api::kAncestorStepLabel));
    if (it != job.template_.metadata.labels.end() && it->second == api::kAncestorTrainer) {
      return &job;
    }
  }
  return nullptr;
}

std::string ClusterRendezvousHost(const TrainJobSource& job, const RuntimeSource& runtime) {
  const api::ReplicatedJob* trainer = TrainerJobOf(runtime.spec.template_.spec);
  std::string rjob = trainer != nullptr ? trainer->name : std::string(api::kNodeContainer);
  return fmt::format("{}-{}-0-0.{}", job.meta.name, rjob, SubdomainOf(job, runtime));
}

TrainJobObjects BuildTrainJobObjects(const TrainJobSource& job, const RuntimeSource& runtime,
                                     const BuildOptions& options) {
  Json metadata = api::Encode(runtime.spec.template_.metadata);
  Json spec = api::Encode(runtime.spec.template_.spec);
  ApplyRuntimePatches(job, metadata, spec);
  const api::TrainerSpec trainer = job.spec.trainer.value_or(api::TrainerSpec{});
  const api::TrainJobInitializer init = job.spec.initializer.value_or(api::TrainJobInitializer{});
  PolicyPlan plan = PlanPolicy(job, runtime);
  for (Json& rjob : spec["replicatedJobs"]) {
    std::string step = trainjob::AncestorStepOf(rjob);
    std::string name = api::StringAt(rjob, "name");
    if (step == api::kAncestorDatasetInitializer) {
      BuildInitializer(rjob, step, init.dataset, options);
    }
    if (step == api::kAncestorModelInitializer) BuildInitializer(rjob, step, init.model, options);
    if (step == api::kAncestorTrainer) {
      rjob["replicas"] = 1;
      SetPodCount(rjob, plan.trainer_pods);
      if (options.mark_trainer_step) {
        rjob["template"]["spec"]["template"]["metadata"]["annotations"]
            [std::string(api::kTrainerStepAnnotation)] = "true";
      }
      if (Json* node = ContainerOf(rjob, api::kNodeContainer)) {
        GiveNodeTheTrainer(*node, trainer, /*program=*/true);
      }
      if (!options.status_server_url.empty()) {
        GiveTrainerStatusEndpoint(rjob, job, options.status_server_url);
      }
    } else if (name == api::kNodeContainer && plan.mpi) {
      // MPI's worker nodes, beside the launcher that runs the program.
      SetPodCount(rjob, plan.node_pods);
      if (plan.launcher_is_node) {
        if (Json* node = ContainerOf(rjob, api::kNodeContainer)) {
          GiveNodeTheTrainer(*node, trainer, /*program=*/false);
        }
      }
    }
  }
  TrainJobObjects out;
  ApplyPolicy(job, runtime, plan, options, spec, out.config_maps);
  MarkGang(job, runtime.spec, spec);
  spec["suspend"] = job.spec.suspend.value_or(false);
  metadata["name"] = job.meta.name;
  metadata["namespace"] = job.meta.namespace_;
  metadata["ownerReferences"] = Json::array({OwnerReferenceTo(job)});
  if (!options.status_server_url.empty()) {
    out.config_maps.push_back(TrainerStatusConfigMap(job, options.status_server_ca));
  }
  for (Json& config_map : out.config_maps) {
    config_map["metadata"]["ownerReferences"] = Json::array({OwnerReferenceTo(job)});
  }
  out.jobset = Json{{"apiVersion", std::string(api::kJobSetGroupVersion)},
                    {"kind", "JobSet"},
                    {"metadata", std::move(metadata)},
                    {"spec", std::move(spec)}};
  return out;
}

}  // namespace trainyard::controller
