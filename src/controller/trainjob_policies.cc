#include "controller/trainjob_policies.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "api/well_known.h"
#include "common/strings.h"
#include "controller/mpi_config.h"
#include "controller/trainjob_json.h"

namespace trainyard::controller {
namespace {

using trainjob::ContainerOf;
using trainjob::EnvField;
using trainjob::EnvValue;
using trainjob::Json;
using trainjob::UpsertNamed;

constexpr std::string_view kCompletionIndexField =
    "metadata.annotations['batch.kubernetes.io/job-completion-index']";

// The trainer step's node container resources: the TrainJob's per node
// if it sets them, else the runtime's.
api::ResourceRequirements NodeResources(const TrainJobSource& job, const RuntimeSource& runtime) {
  if (job.spec.trainer && job.spec.trainer->resources_per_node) {
    return *job.spec.trainer->resources_per_node;
  }
  const api::ReplicatedJob* trainer = TrainerJobOf(runtime.spec.template_.spec);
  if (trainer == nullptr) return {};
  for (const api::Container& c : trainer->template_.spec.template_.spec.containers) {
    if (c.name == api::kNodeContainer) return c.resources;
  }
  return {};
}

// The first resource whose name has "gpu" in it, requested or else limited.
int64_t GpusOf(const api::ResourceRequirements& resources) {
  for (const api::ResourceList* list : {&resources.requests, &resources.limits}) {
    for (const auto& [name, quantity] : *list) {
      if (AsciiLower(name).find("gpu") != std::string::npos && quantity.milli() > 0) {
        return quantity.Value();
      }
    }
  }
  return 0;
}

// Whole CPUs requested (else limited), rounded up; 0 when neither is set.
int64_t CpusOf(const api::ResourceRequirements& resources) {
  for (const api::ResourceList* list : {&resources.requests, &resources.limits}) {
    auto it = list->find("cpu");
    if (it != list->end() && it->second.milli() > 0) return (it->second.milli() + 999) / 1000;
  }
  return 0;
}

// torch's PET_NPROC_PER_NODE: an integer as given; `cpu`, or `auto` on a
// node without GPUs, the node's CPUs (at least 1); else the word, which
// torchrun resolves.
std::string ProcsPerNode(const TrainJobSource& job, const RuntimeSource& runtime,
                         const api::ResourceRequirements& resources) {
  Json value = "auto";
  const api::MlPolicy& policy = *runtime.spec.ml_policy;
  if (policy.torch && !policy.torch->num_proc_per_node.is_null()) {
    value = policy.torch->num_proc_per_node;
  }
  if (job.spec.trainer && !job.spec.trainer->num_proc_per_node.is_null()) {
    value = job.spec.trainer->num_proc_per_node;
  }
  if (value.is_number_integer()) return std::to_string(value.get<int64_t>());
  std::string word = value.is_string() ? value.get<std::string>() : "auto";
  if (word == "cpu" || (word == "auto" && GpusOf(resources) == 0)) {
    return std::to_string(std::max<int64_t>(1, CpusOf(resources)));
  }
  return word;
}

Json* TrainerNode(Json& spec) {
  for (Json& rjob : spec["replicatedJobs"]) {
    if (trainjob::AncestorStepOf(rjob) == api::kAncestorTrainer) {
      return ContainerOf(rjob, api::kNodeContainer);
    }
  }
  return nullptr;
}

bool IsTorchtune(const TrainJobSource& job) {
  return job.spec.trainer && job.spec.trainer->command == std::vector<std::string>{"tune", "run"};
}

// torchtune's model from the runtime's name: torchtune-llama3.2-1b -> llama3_2/1B.
std::string TorchtuneModel(const RuntimeSource& runtime) {
  std::vector<std::string> parts = SplitNonEmpty(runtime.meta.name, '-');
  if (parts.size() != 3) return "";
  std::string family = parts[1];
  std::replace(family.begin(), family.end(), '.', '_');
  std::string size = parts[2];
  std::transform(size.begin(), size.end(), size.begin(), ::toupper);
  return family + "/" + size;
}

bool HasConfigKey(const std::vector<std::string>& args, std::string_view key) {
  return std::any_of(args.begin(), args.end(),
                     [&](const std::string& a) { return a.substr(0, a.find('=')) == key; });
}

// `tune run` given upstream's recipe, config and rendezvous: the words
// appended to the TrainJob's command.
std::vector<std::string> TorchtuneWords(const TrainJobSource& job, const RuntimeSource& runtime,
                                        const PolicyPlan& plan, const BuildOptions& options,
                                        const Json& runtime_node) {
  const std::vector<std::string>& args = job.spec.trainer->args;
  // An integer (validated to at most 2^31-1), else the word auto or gpu: the GPUs.
  int64_t devices = plan.gpus;
  const std::string& procs = plan.procs_per_node;
  std::from_chars(procs.data(), procs.data() + procs.size(), devices);
  bool qlora = HasConfigKey(args, "model.quantize_base") && !HasConfigKey(args, "model.use_dora");
  bool lora = HasConfigKey(args, "model.lora_attn_modules");
  std::string recipe = "full_finetune_distributed";
  std::string suffix = "_full";
  if (plan.nodes > 1) {
    suffix = "_full_multinode";
  } else if (devices == 1) {
    recipe = qlora || lora ? "lora_finetune_single_device" : "full_finetune_single_device";
    suffix = qlora ? "_qlora_single_device" : lora ? "_lora_single_device" : "_full_single_device";
  } else if (qlora || lora) {
    recipe = "lora_finetune_distributed";
    suffix = qlora ? "_qlora" : "_lora";
  }
  std::vector<std::string> words;
  if (plan.nodes > 1 || devices > 1) {
    words.push_back(
        fmt::format("--rdzv_endpoint={}:{}", options.rendezvous_host, options.rendezvous_port));
  }
  words.insert(words.end(), {recipe, "--config", TorchtuneModel(runtime) + suffix});
  // The runtime's own settings of where the model, tokenizer and output live.
  for (const Json& word : api::ArrayRefAt(runtime_node, {"command"})) {
    std::string w = word.is_string() ? word.get<std::string>() : "";
    std::string key = w.substr(0, w.find('='));
    if (w.find('=') != std::string::npos &&
        (key == "output_dir" || key == "tokenizer.path" || key == "checkpointer.checkpoint_dir" ||
         key == "tokenizer.merges_file")) {
      words.push_back(w);
    }
  }
  return words;
}

void ApplyTorch(const TrainJobSource& job, const RuntimeSource& runtime, const PolicyPlan& plan,
                const BuildOptions& options, Json& spec, const Json& runtime_node) {
  std::vector<Json> env = {EnvValue("PET_NNODES", std::to_string(plan.nodes)),
                           EnvValue("PET_NPROC_PER_NODE", plan.procs_per_node),
                           EnvField("PET_NODE_RANK", std::string(kCompletionIndexField))};
  bool torchtune = IsTorchtune(job);
  if (!torchtune) {
    env.push_back(EnvValue("PET_MASTER_ADDR", options.rendezvous_host));
    env.push_back(EnvValue("PET_MASTER_PORT", std::to_string(options.rendezvous_port)));
  }
  Json* node = TrainerNode(spec);
  if (node == nullptr) return;
  for (const Json& var : env) UpsertNamed((*node)["env"], var);
  trainjob::UpsertPort(*node, options.rendezvous_port);
  if (torchtune) {
    for (std::string& word : TorchtuneWords(job, runtime, plan, options, runtime_node)) {
      (*node)["command"].push_back(std::move(word));
    }
  }
  // envInjection: the same variables in the other containers it names.
  const auto& injection = runtime.spec.ml_policy->torch->env_injection;
  if (!injection) return;
  for (const api::TorchEnvTarget& target : injection->targets) {
    Json* rjob = trainjob::FindNamed(spec["replicatedJobs"], target.job_name);
    if (rjob == nullptr) continue;
    for (const std::string& name : target.container_names) {
      Json* container = ContainerOf(*rjob, name);
      if (container == nullptr) continue;
      for (const Json& var : env) UpsertNamed((*container)["env"], var);
    }
  }
}

void ApplyJax(const PolicyPlan& plan, const BuildOptions& options, Json& spec) {
  Json* node = TrainerNode(spec);
  if (node == nullptr) return;
  std::string port = std::to_string(options.rendezvous_port);
  for (Json var : {EnvValue("JAX_NUM_PROCESSES", std::to_string(plan.nodes)),
                   EnvField("JAX_PROCESS_ID", std::string(kCompletionIndexField)),
                   EnvValue("JAX_COORDINATOR_ADDRESS", options.rendezvous_host + ":" + port),
                   EnvValue("JAX_COORDINATOR_PORT", port)}) {
    UpsertNamed((*node)["env"], std::move(var));
  }
  trainjob::UpsertPort(*node, options.rendezvous_port);
}

void ApplyXgboost(const PolicyPlan& plan, const BuildOptions& options, Json& spec) {
  Json* node = TrainerNode(spec);
  if (node == nullptr) return;
  int64_t workers = plan.nodes * std::max<int64_t>(1, plan.gpus);
  for (Json var : {EnvValue("DMLC_TRACKER_URI", options.rendezvous_host),
                   EnvValue("DMLC_TRACKER_PORT", std::to_string(options.rendezvous_port)),
                   EnvField("DMLC_TASK_ID", std::string(kCompletionIndexField)),
                   EnvValue("DMLC_NUM_WORKER", std::to_string(workers))}) {
    UpsertNamed((*node)["env"], std::move(var));
  }
  trainjob::UpsertPort(*node, options.rendezvous_port);
}

std::string SubdomainOf(const TrainJobSource& job, const Json& spec) {
  std::string subdomain = api::StringAt(spec, {"network", "subdomain"});
  return subdomain.empty() ? job.meta.name : subdomain;
}

// On one machine the node job's sshd (upstream's runtimes run one for the
// launcher to reach) is neither needed nor runnable: its container just
// stays up for trainyard exec to start the ranks' daemons in, as an MPIJob
// worker without a command does.
void RunNodesWithoutSshd(Json& spec) {
  for (Json& rjob : spec["replicatedJobs"]) {
    if (api::StringAt(rjob, "name") != api::kNodeContainer) continue;
    Json* node = ContainerOf(rjob, api::kNodeContainer);
    if (node == nullptr) continue;
    const Json& command = api::ArrayRefAt(*node, {"command"});
    std::string program = command.empty() || !command[0].is_string() ? "" : command[0];
    if (program.substr(program.rfind('/') + 1) != "sshd") continue;
    (*node)["command"] = Json::array({"sleep"});
    (*node)["args"] = Json::array({"365d"});
  }
}

// MPI: the hostfile (one line per node pod, with its slots) in a ConfigMap
// mounted at /etc/mpi in the launcher; OpenMPI told where it is; the SSH
// key Secret's volume in every node container, or the rsh agent.
void ApplyMpi(const TrainJobSource& job, const RuntimeSource& runtime, const PolicyPlan& plan,
              const BuildOptions& options, Json& spec, std::vector<Json>& config_maps) {
  const api::MpiPolicy& mpi = *runtime.spec.ml_policy->mpi;
  std::string hostfile;
  for (const Json& rjob : spec["replicatedJobs"]) {
    std::string name = api::StringAt(rjob, "name");
    if (name != api::kNodeContainer && !(name == api::kLauncherJob && plan.launcher_is_node)) {
      continue;
    }
    int64_t pods = name == api::kNodeContainer ? plan.node_pods : 1;
    for (int64_t i = 0; i < pods; ++i) {
      hostfile += fmt::format("{}-{}-0-{}.{} slots={}\n", job.meta.name, name, i,
                              SubdomainOf(job, spec), plan.slots);
    }
  }
  std::string config_map = job.meta.name + "-mpi-hostfile";
  bool local = !options.mpi_rsh_agent.empty();
  Json data = {{"hostfile", hostfile}};
  Json items = Json::array({{{"key", "hostfile"}, {"path", "hostfile"}}});
  if (local) {
    // On one machine mpirun reaches the nodes through trainyard exec, not
    // ssh: the agent rides in the hostfile's ConfigMap, as an MPIJob's.
    data["kubexec.sh"] = LocalKubexecScript(options.mpi_exec_command, job.meta.namespace_);
    items.push_back({{"key", "kubexec.sh"}, {"path", "kubexec.sh"}, {"mode", 0555}});
    RunNodesWithoutSshd(spec);
  }
  config_maps.push_back(
      Json{{"apiVersion", "v1"},
           {"kind", "ConfigMap"},
           {"metadata", {{"name", config_map}, {"namespace", job.meta.namespace_}}},
           {"data", std::move(data)}});
  std::string secret = job.meta.name + "-mpi-ssh-auth";
  for (Json& rjob : spec["replicatedJobs"]) {
    std::string name = api::StringAt(rjob, "name");
    if (name != api::kLauncherJob && name != api::kNodeContainer) continue;
    // Pointers into an ordered_json die when a key is added beside them:
    // each container is looked up after its pod's volumes were added.
    Json& pod = trainjob::PodSpecOf(rjob);
    if (options.mpi_rsh_agent.empty()) {
      UpsertNamed(
          pod["volumes"],
          Json{{"name", "mpi-ssh-auth"},
               {"secret",
                {{"secretName", secret},
                 {"defaultMode", 0640},
                 {"items",
                  Json::array({{{"key", "ssh-privatekey"}, {"path", "id_rsa"}},
                               {{"key", "ssh-publickey"}, {"path", "id_rsa.pub"}},
                               {{"key", "ssh-publickey"}, {"path", "authorized_keys"}}})}}}});
      if (Json* node = ContainerOf(rjob, api::kNodeContainer)) {
        UpsertNamed((*node)["volumeMounts"],
                    Json{{"name", "mpi-ssh-auth"}, {"mountPath", mpi.ssh_auth_mount_path}});
      }
    }
    if (name != api::kLauncherJob) continue;
    UpsertNamed(
        pod["volumes"],
        Json{{"name", "mpi-hostfile"},
             {"configMap", {{"name", config_map}, {"items", items}, {"defaultMode", 0444}}}});
    Json* node = ContainerOf(rjob, api::kNodeContainer);
    if (node == nullptr) continue;
    UpsertNamed((*node)["volumeMounts"], Json{{"name", "mpi-hostfile"}, {"mountPath", "/etc/mpi"}});
    // Open MPI 4 reads ORTE's names, Open MPI 5 PRRTE's and ignores the
    // others (its ranks would all run on the launcher): both, as Trainer
    // v2.4 sets them. PRRTE is told not to keep FQDNs: it would not match
    // the launcher's own short hostfile entry and would ssh to itself.
    std::string slots = std::to_string(plan.slots);
    std::vector<Json> env = {EnvValue("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
                             EnvValue("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
                             EnvValue("OMPI_MCA_orte_set_default_slots", slots),
                             EnvValue("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
                             EnvValue("PRTE_MCA_prte_default_hostfile", "/etc/mpi/hostfile"),
                             EnvValue("PRTE_MCA_prte_keep_fqdn_hostnames", "false"),
                             EnvValue("PRTE_MCA_prte_set_default_slots", slots),
                             EnvValue("PRTE_MCA_plm_ssh_args", "-o ConnectionAttempts=10")};
    if (!options.mpi_rsh_agent.empty()) {
      env.push_back(EnvValue("OMPI_MCA_plm_rsh_agent", options.mpi_rsh_agent));
      env.push_back(EnvValue("PRTE_MCA_plm_ssh_agent", options.mpi_rsh_agent));
    }
    for (Json& var : env) UpsertNamed((*node)["env"], std::move(var));
  }
}

}  // namespace

PolicyPlan PlanPolicy(const TrainJobSource& job, const RuntimeSource& runtime) {
  PolicyPlan plan;
  const api::MlPolicy policy = runtime.spec.ml_policy.value_or(api::MlPolicy{});
  plan.nodes = job.spec.trainer && job.spec.trainer->num_nodes ? *job.spec.trainer->num_nodes
                                                               : policy.num_nodes.value_or(1);
  api::ResourceRequirements resources = NodeResources(job, runtime);
  plan.gpus = GpusOf(resources);
  plan.trainer_pods = plan.nodes;
  if (policy.torch) plan.procs_per_node = ProcsPerNode(job, runtime, resources);
  if (policy.mpi) {
    plan.mpi = true;
    plan.trainer_pods = 1;  // the launcher
    plan.launcher_is_node = policy.mpi->run_launcher_as_node.value_or(false);
    plan.node_pods = plan.launcher_is_node ? std::max(plan.nodes - 1, 1) : plan.nodes;
    plan.slots = policy.mpi->num_proc_per_node.value_or(1);
    const Json& procs = job.spec.trainer ? job.spec.trainer->num_proc_per_node : Json();
    if (procs.is_number_integer()) {
      plan.slots = procs.get<int32_t>();
    } else if (plan.slots == 1 && plan.gpus > 1) {
      plan.slots = static_cast<int32_t>(plan.gpus);
    }
  }
  return plan;
}

void ApplyPolicy(const TrainJobSource& job, const RuntimeSource& runtime, const PolicyPlan& plan,
                 const BuildOptions& options, Json& spec, std::vector<Json>& config_maps) {
  if (!runtime.spec.ml_policy) return;
  const api::MlPolicy& policy = *runtime.spec.ml_policy;
  if (policy.torch) {
    // torchtune keeps the runtime's own settings: read them before the build replaced them.
    Json runtime_node;
    if (const api::ReplicatedJob* trainer = TrainerJobOf(runtime.spec.template_.spec)) {
      for (const api::Container& c : trainer->template_.spec.template_.spec.containers) {
        if (c.name == api::kNodeContainer) runtime_node = api::Encode(c);
      }
    }
    ApplyTorch(job, runtime, plan, options, spec, runtime_node);
  } else if (policy.jax) {
    ApplyJax(plan, options, spec);
  } else if (policy.xgboost) {
    ApplyXgboost(plan, options, spec);
  } else if (policy.mpi) {
    ApplyMpi(job, runtime, plan, options, spec, config_maps);
  }
}

std::vector<std::string> ReservedEnv(const api::MlPolicy& policy) {
  if (policy.torch) {
    return {"PET_MASTER_ADDR", "PET_MASTER_PORT", "PET_NNODES", "PET_NODE_RANK",
            "PET_NPROC_PER_NODE"};
  }
  if (policy.xgboost) {
    return {"DMLC_NUM_WORKER", "DMLC_TASK_ID", "DMLC_TRACKER_PORT", "DMLC_TRACKER_URI"};
  }
  if (policy.jax) {
    return {"JAX_COORDINATOR_ADDRESS", "JAX_COORDINATOR_PORT", "JAX_NUM_PROCESSES",
            "JAX_PROCESS_ID"};
  }
  if (policy.mpi) {
    return {"OMPI_MCA_orte_default_hostfile",  "OMPI_MCA_orte_keep_fqdn_hostnames",
            "OMPI_MCA_orte_set_default_slots", "OMPI_MCA_plm_rsh_args",
            "PRTE_MCA_prte_default_hostfile",  "PRTE_MCA_prte_keep_fqdn_hostnames",
            "PRTE_MCA_prte_set_default_slots", "PRTE_MCA_plm_ssh_args"};
  }
  return {};
}

}  // namespace trainyard::controller
