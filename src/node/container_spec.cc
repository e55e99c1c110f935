#include "node/container_spec.h"

#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "api/well_known.h"
#include "common/strings.h"
#include "node/cdi.h"
#include "node/container_env.h"
#include "node/host_torchrun.h"
#include "node/image_root.h"
#include "node/image_run_as.h"
#include "node/output_dir.h"
#include "node/service_account.h"
#include "node/tracking_env.h"
#include "node/trainer_status_env.h"
#include "runtime/local/expand.h"

namespace trainyard::node {
namespace {

// containerd's PATH for an image that sets none.
constexpr std::string_view kDefaultPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// CUDA_VISIBLE_DEVICES as the scheduler gave the pod its GPUs, replacing
// any the pod set itself: the device plugin's word is final on Kubernetes.
void PinGpus(const api::Pod& pod, EnvList& env) {
  auto given = pod.metadata.annotations.find(std::string(api::kGpusAnnotation));
  std::string ids = given == pod.metadata.annotations.end() ? "" : given->second;
  std::erase_if(env, [](const auto& entry) { return entry.first == "CUDA_VISIBLE_DEVICES"; });
  env.emplace_back("CUDA_VISIBLE_DEVICES", ids);
}

// A container's limits as the kubelet sets them (a CPU request defaults to
// its limit, as Kubernetes defaults it).
CgroupLimits LimitsOf(const api::Container& c) {
  CgroupLimits limits;
  const auto& l = c.resources.limits;
  const auto& r = c.resources.requests;
  if (auto it = l.find("memory"); it != l.end()) limits.memory_bytes = it->second.milli() / 1000;
  if (auto it = l.find("cpu"); it != l.end()) limits.cpu_limit_milli = it->second.milli();
  if (auto it = r.find("cpu"); it != r.end()) {
    limits.cpu_request_milli = it->second.milli();
  } else {
    limits.cpu_request_milli = limits.cpu_limit_milli;
  }
  return limits;
}

// Translates `text` within `budget` more bytes than it has (and the bound
// on any one string), taking what it grows by from the budget.
Status TranslateWithin(std::string& text, const Mounts& mounts, size_t& budget,
                       const std::string& what) {
  size_t bound = std::min(runtime::kMaxExpandedBytes, text.size() + budget);
  std::optional<std::string> out = TranslatePaths(text, mounts, bound);
  if (!out) {
    return InvalidArgumentError(fmt::format(
        "{}: with its mount paths translated to host paths it would pass {} KiB, or the "
        "environment and arguments {} MiB; mount the volumes at fewer places in it, or use "
        "shorter host paths",
        what, runtime::kMaxExpandedBytes / 1024, runtime::kMaxEnvAndArgvBytes / (1024 * 1024)));
  }
  budget = budget + text.size() - out->size();  // out is at most text + budget long
  text = std::move(*out);
  return OkStatus();
}

// What execve's strings of `env` and `argv` may still grow by.
size_t Room(const EnvList& env, const std::vector<std::string>& argv) {
  size_t used = 0;
  for (const auto& [name, value] : env) used += name.size() + value.size() + 2;
  for (const std::string& arg : argv) used += arg.size() + 1;
  return used >= runtime::kMaxEnvAndArgvBytes ? 0 : runtime::kMaxEnvAndArgvBytes - used;
}

// Mount paths translated in the env values the pod itself set, within the
// bounds expansion keeps.
Status TranslateEnv(const api::Container& container, const Mounts& mounts, EnvList& env) {
  size_t budget = Room(env, {});
  for (auto& [name, value] : env) {
    // Captured by name: clang 14 cannot capture a structured binding.
    bool from_pod = std::any_of(container.env.begin(), container.env.end(),
                                [&name = name](const api::EnvVar& v) { return v.name == name; });
    if (from_pod) RETURN_IF_ERROR(TranslateWithin(value, mounts, budget, "env " + name));
  }
  return OkStatus();
}

Status TranslateArgv(const Mounts& mounts, const EnvList& env, std::vector<std::string>& argv) {
  size_t budget = Room(env, argv);
  for (size_t i = 0; i < argv.size(); ++i) {
    RETURN_IF_ERROR(TranslateWithin(argv[i], mounts, budget, fmt::format("argv[{}]", i)));
  }
  return OkStatus();
}

}  // namespace

std::string RunGroupName(const std::string& pod_uid, const std::string& container, int32_t run) {
  return fmt::format("{}/{}_{}", pod_uid, container, run);
}

Result<ContainerSpecBuilder::Prepared> ContainerSpecBuilder::Prepare(const Run& run,
                                                                     const EnvList& base,
                                                                     const ImageRoot* root) {
  const api::Pod& pod = run.pod;
  const api::Container& container = run.container;
  Prepared out;
  std::vector<std::string> skipped;
  // The API server, as the `kubernetes` Service is, under the pod's env.
  const std::optional<ApiAccess>& api = options_.api_access;
  EnvList with_api;
  if (api) {
    with_api = base;
    AddApiAccessEnv(*api, with_api);
  }
  ASSIGN_OR_RETURN(out.env, ContainerEnv(pod, container, api ? with_api : base, options_.facts,
                                         *options_.store, &skipped));
  for (const std::string& keys : skipped) {
    run.event("Warning", "InvalidEnvironmentVariableNames",
              fmt::format("{} were skipped: they are not valid environment variable names", keys));
  }
  if (options_.pin_gpus) PinGpus(pod, out.env);
  std::optional<TrackedOwner> owner = TrackedOwnerOf(pod);
  if (owner && !tracking_url_.empty()) {
    AddTrackingEnv(pod, *owner, tracking_url_, tracking_ca_, out.env);
  }
  bool reports_status = owner && !tracking_url_.empty() && ReportsTrainerStatus(pod, *owner);
  if (reports_status) AddTrainerStatusEnv(pod, *owner, tracking_url_, out.env);
  RETURN_IF_ERROR(CheckHostPaths(pod, options_.host_access, *options_.store));
  ASSIGN_OR_RETURN(out.user, options_.run_as.For(pod.metadata.namespace_));
  if (root != nullptr) {
    ASSIGN_OR_RETURN(out.user, ImageRunAs(pod, container, *root, std::move(out.user), out.env));
  }
  ASSIGN_OR_RETURN(out.mounts, PrepareVolumes(pod, container, run.volumes, FileOwnerOf(out.user),
                                              *options_.store));
  if (reports_status) {
    ASSIGN_OR_RETURN(Mount files, PrepareTrainerStatusFiles(container, *owner, tracking_ca_,
                                                            run.volumes, FileOwnerOf(out.user)));
    out.mounts.push_back(std::move(files));
  }
  if (api && MountsServiceAccount(pod, container)) {
    ASSIGN_OR_RETURN(Mount account, PrepareServiceAccount(pod, container, *api, run.volumes,
                                                          FileOwnerOf(out.user)));
    out.mounts.push_back(std::move(account));
  }
  if (owner && !options_.artifacts_dir.empty()) {
    ASSIGN_OR_RETURN(Mount output, PrepareOutputDir(options_.artifacts_dir, pod.metadata.namespace_,
                                                    *owner, out.user));
    AddOutputDirEnv(container, output.host_path, out.env);
    out.mounts.push_back(std::move(output));
  }
  return out;
}

Result<runtime::ProcessSpec> ContainerSpecBuilder::Build(const Run& run) {
  const api::Pod& pod = run.pod;
  const api::Container& container = run.container;
  if (options_.images != nullptr && !AsksForHostRoot(pod)) return BuildInImage(run);
  if (options_.images != nullptr && !options_.host_root_allowed) {
    return FailedPreconditionError(fmt::format(
        "container {} may not run on this machine's files: the pod's {}: {} is refused here "
        "(--root image-only); remove the annotation to run it in its image",
        container.name, api::kRootAnnotation, api::kHostRoot));
  }
  ASSIGN_OR_RETURN(Prepared prepared, Prepare(run, options_.base_env, nullptr));
  auto& [env, user, mounts] = prepared;
  std::string no_sandbox =
      options_.sandboxes == nullptr ? "no sandboxes are used here" : options_.sandboxes->Problem();
  std::vector<std::string> sandbox;
  if (no_sandbox.empty()) {
    ASSIGN_OR_RETURN(sandbox, SandboxFor(run, mounts));
  }
  if (user) {
    RETURN_IF_ERROR(GivePodFiles(pod, run.volumes, options_.pods_dir, options_.host_access, *user));
    UseHomeOf(*user, container, env);
  }
  std::string working_dir = container.working_dir;
  if (!no_sandbox.empty()) {
    WarnPathRewriting(no_sandbox, run);
    RETURN_IF_ERROR(TranslateEnv(container, mounts, env));
  }
  ASSIGN_OR_RETURN(std::vector<std::string> argv, ContainerArgv(container, env));
  std::string adapted = AdaptTorchrunToHost(argv, env);
  if (!adapted.empty()) {
    run.event("Normal", "TorchrunAdapted", adapted);
    if (!std::exchange(said_torchrun_adapted_, true)) options_.log->Info("trainyard: {}", adapted);
  }
  if (!no_sandbox.empty()) {
    RETURN_IF_ERROR(TranslateArgv(mounts, env, argv));
    size_t path_room = PATH_MAX;  // what chdir takes
    RETURN_IF_ERROR(TranslateWithin(working_dir, mounts, path_room, "workingDir"));
  }
  runtime::ProcessSpec spec = SpecOf(run, std::move(argv), std::move(prepared));
  spec.working_dir = working_dir.empty() ? options_.default_working_dir : std::move(working_dir);
  spec.sandbox = std::move(sandbox);
  spec.userns = no_sandbox.empty() ? options_.sandboxes->userns() : "";
  return spec;
}

runtime::ProcessSpec ContainerSpecBuilder::SpecOf(const Run& run, std::vector<std::string> argv,
                                                  Prepared prepared) {
  return runtime::ProcessSpec{.argv = std::move(argv),
                              .env = std::move(prepared.env),
                              .log_path = run.log_path,
                              .shim = options_.shim,
                              .exit_path = run.exit_path,
                              .detach = options_.detach,
                              .user = std::move(prepared.user),
                              .cgroups = CgroupsFor(run)};
}

Result<runtime::ProcessSpec> ContainerSpecBuilder::BuildInImage(const Run& run) {
  const api::Pod& pod = run.pod;
  const api::Container& container = run.container;
  std::string no_sandbox =
      options_.sandboxes == nullptr ? "no sandboxes are used here" : options_.sandboxes->Problem();
  if (!no_sandbox.empty()) {
    return FailedPreconditionError(
        fmt::format("container {} runs in its image, which needs a sandbox (bubblewrap): {}",
                    container.name, no_sandbox));
  }
  // overlayfs in the replica's own mount namespace: root's, for now.
  if (geteuid() != 0) {
    return FailedPreconditionError(fmt::format(
        "container {} runs in its image, whose root trainyard mounts only when it runs as root; "
        "run trainyard as root, or the pod on this machine's files (its template annotated "
        "trainyard.dev/root: host, or --root host)",
        container.name));
  }
  ASSIGN_OR_RETURN(ImageRoot root, PrepareImageRoot(*options_.images, container,
                                                    fmt::format("{}/{}_{}", run.volumes.roots,
                                                                container.name, run.run)));
  // The image's environment under the pod's; PATH as containerd defaults
  // it when the image sets none (HOME once the user is known: Prepare).
  EnvList base = root.config.env;
  if (std::none_of(base.begin(), base.end(), [](const auto& e) { return e.first == "PATH"; })) {
    base.emplace_back("PATH", std::string(kDefaultPath));
  }
  ASSIGN_OR_RETURN(Prepared prepared, Prepare(run, base, &root));
  auto& [env, user, mounts] = prepared;
  if (Status written = WriteHostsFile(run.volumes, HostsFileOf(pod, options_.host));
      !written.ok()) {
    return UnavailableError(fmt::format("cannot write the pod's hosts file {}: {}",
                                        run.volumes.hosts_file, written.message()));
  }
  RETURN_IF_ERROR(AddGpus(run, root, prepared));
  RETURN_IF_ERROR(MakeMountParents(root, mounts));
  ASSIGN_OR_RETURN(std::vector<std::string> sandbox,
                   ImageSandboxArgs(options_.sandboxes->bwrap(), options_.shim,
                                    {.hostname = PodHostname(pod),
                                     .mounts = mounts,
                                     .hosts_file = run.volumes.hosts_file,
                                     .read_only_root = ReadOnlyRoot(container)},
                                    root));
  if (user) {
    RETURN_IF_ERROR(GivePodFiles(pod, run.volumes, options_.pods_dir, options_.host_access, *user));
  }
  ASSIGN_OR_RETURN(ExpandedCommand expanded, ExpandCommand(container, env));
  ASSIGN_OR_RETURN(std::vector<std::string> argv,
                   image::ContainerArgv(root.config, expanded.command, expanded.args));
  runtime::ProcessSpec spec = SpecOf(run, std::move(argv), std::move(prepared));
  spec.working_dir = image::WorkingDirOf(root.config, container.working_dir);
  spec.sandbox = std::move(sandbox);
  spec.sandbox_shim = std::string(kShimInRoot);
  spec.root_overlay_target = root.merged;
  spec.root_overlay_data = root.OverlayData();
  spec.userns = options_.sandboxes->userns();
  return spec;
}

Status ContainerSpecBuilder::AddGpus(const Run& run, const ImageRoot& root, Prepared& prepared) {
  auto given = run.pod.metadata.annotations.find(std::string(api::kGpusAnnotation));
  if (given == run.pod.metadata.annotations.end() || given->second.empty()) return OkStatus();
  std::vector<std::string> ids = SplitNonEmpty(given->second, ',');
  Result<CdiEdits> edits = CdiEditsFor(options_.cdi_spec_dirs, "nvidia.com/gpu", ids);
  if (!edits.ok() && !options_.machine_gpus && edits.status().code() == StatusCode::kNotFound) {
    // A simulated inventory's GPUs: there is nothing to bind, and it is said.
    run.event("Warning", "GPUsNotBound",
              fmt::format("GPUs {} of a simulated inventory are not bound into the image's root: "
                          "{}",
                          given->second, edits.status().message()));
    return OkStatus();
  }
  if (!edits.ok()) {
    return Status(edits.status().code(), fmt::format("container {}: its GPUs: {}",
                                                     run.container.name, edits.status().message()));
  }
  Mounts devices = CdiMounts(*edits);
  prepared.mounts.insert(prepared.mounts.end(), devices.begin(), devices.end());
  ApplyCdiEnv(*edits, prepared.env);
  return MakeCdiSymlinks(*edits, root);
}

Result<std::vector<std::string>> ContainerSpecBuilder::SandboxFor(const Run& run,
                                                                  const Mounts& mounts) const {
  const api::Pod& pod = run.pod;
  const std::string& hosts = run.volumes.hosts_file;
  if (Status written = WriteHostsFile(run.volumes, HostsFileOf(pod, options_.host));
      !written.ok()) {
    return UnavailableError(
        fmt::format("cannot write the pod's hosts file {}: {}", hosts, written.message()));
  }
  return SandboxArgs(options_.sandboxes->bwrap(), {.hostname = PodHostname(pod),
                                                   .mounts = mounts,
                                                   .hosts_file = hosts,
                                                   .read_only_root = ReadOnlyRoot(run.container)});
}

void ContainerSpecBuilder::WarnPathRewriting(const std::string& why, const Run& run) {
  const api::Pod& pod = run.pod;
  const api::Container& container = run.container;
  // Said where sandboxes were looked for: not by an agent given none.
  if (options_.sandboxes != nullptr && !std::exchange(said_path_rewriting_, true)) {
    options_.log->Warning(
        "trainyard: warning: replicas run without mount namespaces ({}): they reach their "
        "volumes through path rewriting, not at their mountPath, see the machine's host "
        "name, and can write to readOnly mounts",
        why);
  }
  if (api::FindAt(pod.spec.extra, {"hostAliases"}) != nullptr) {
    run.event("Warning", "HostAliasesNotApplied",
              fmt::format("hostAliases are written to /etc/hosts only in a sandbox ({})", why));
  }
  if (ReadOnlyRoot(container)) {
    run.event(
        "Warning", "ReadOnlyNotEnforced",
        fmt::format("readOnlyRootFilesystem is not enforced without a mount namespace ({})", why));
  }
  if (options_.api_access && MountsServiceAccount(pod, container)) {
    run.event("Warning", "ServiceAccountNotMounted",
              fmt::format("the service account's token is not at {} without a mount namespace "
                          "({}): in-cluster clients find none",
                          kServiceAccountDir, why));
  }
  for (const api::VolumeMount& mount : container.volume_mounts) {
    auto volume = std::find_if(pod.spec.volumes.begin(), pod.spec.volumes.end(),
                               [&](const api::Volume& v) { return v.name == mount.name; });
    bool claim_read_only = volume != pod.spec.volumes.end() && volume->persistent_volume_claim &&
                           volume->persistent_volume_claim->read_only.value_or(false);
    if (!mount.read_only.value_or(false) && !claim_read_only) continue;
    run.event(
        "Warning", "ReadOnlyNotEnforced",
        fmt::format("volumeMount {} at {}: readOnly is not enforced without a mount namespace "
                    "({})",
                    mount.name, mount.mount_path, why));
  }
}

std::vector<std::string> ContainerSpecBuilder::CgroupsFor(const Run& run) {
  CgroupLimits limits = LimitsOf(run.container);
  if (options_.pod_max_pids > 0) limits.pod_max_pids = options_.pod_max_pids;
  std::string problem =
      options_.cgroups == nullptr ? "no control groups are used here" : options_.cgroups->problem();
  // Every run has a group where groups can be made, limits or none: what
  // it leaves behind is ended with it, and its pod's tasks are bounded.
  Result<std::vector<std::string>> made = FailedPreconditionError(problem);
  if (problem.empty()) {
    made = options_.cgroups->Make(RunGroupName(run.pod.metadata.uid, run.container.name, run.run),
                                  limits);
  }
  if (made.ok()) return *made;
  if (!limits.any()) return {};
  if (!std::exchange(said_no_limits_, true)) {
    options_.log->Warning(
        "trainyard: warning: containers' memory and CPU limits are not enforced on this "
        "machine ({}); their replicas run without them",
        made.status().message());
  }
  return {};
}

}  // namespace trainyard::node
