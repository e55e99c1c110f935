#include "cli/run_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <variant>

#include "api/names.h"
#include "api/pod_object.h"
#include "api/tracking.h"
#include "api/well_known.h"
#include "cli/api_access.h"
#include "cli/control_plane.h"
#include "cli/engine_backend.h"
#include "cli/experiment_view.h"
#include "cli/image_pulls.h"
#include "cli/local_api.h"
#include "cli/log_tail.h"
#include "cli/manifests.h"
#include "cli/optimization_view.h"
#include "cli/run_status.h"
#include "cli/stop_on_signals.h"
#include "cli/without_gpus.h"
#include "common/strings.h"
#include "controller/conditions.h"
#include "controller/optimization_trials.h"
#include "controller/pod_state.h"
#include "engine/engine.h"
#include "engine/inventory.h"
#include "image/image_gc.h"
#include "image/reference.h"
#include "node/cgroups.h"
#include "node/sandbox.h"
#include "server/auth.h"
#include "server/handler.h"
#include "server/http_server.h"

namespace trainyard::cli {

std::vector<std::pair<std::string, std::string>> BaseEnv() {
  std::vector<std::pair<std::string, std::string>> env;
  for (const char* name :
       {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
        "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "CUDA_HOME"}) {
    if (const char* value = std::getenv(name)) env.emplace_back(name, value);
  }
  if (std::getenv("PATH") == nullptr) {
    env.emplace_back("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  }
  return env;
}

namespace {

std::string RunDirName(TimePoint now) {
  std::string stamp = FormatRfc3339(now);  // 2026-11-21T10:00:00Z
  std::erase(stamp, ':');
  std::erase(stamp, '-');
  return fmt::format("{}-{}", stamp.substr(0, stamp.size() - 1), getpid());
}

// Jobs it cannot run yet are refused before anything starts.
bool CheckRunnable(const LoadedManifests& loaded) {
  bool ok = true;
  for (const LoadedObject& object : loaded.objects) {
    if (!object.checked.result.ok()) {
      PrintErrors(object, std::cerr);
      ok = false;
    }
    for (const std::string& w : object.checked.result.warnings)
      std::cerr << "warning: " << w << '\n';
  }
  return ok && loaded.unreadable == 0;
}

// Whom replicas run as: nobody when trainyard is root, unless --run-as says
// otherwise, since a root replica reads anything on the machine (a hostPath
// to /etc, other users' files). That user must reach the working directory
// and the run's folders.
Result<runtime::RunAsPolicy> RunAsFor(const RunOptions& options, const std::string& home,
                                      const std::string& working_dir) {
  ASSIGN_OR_RETURN(runtime::RunAsPolicy policy, runtime::MakeRunAsPolicy(options.run_as, {}));
  if (!policy.default_user) return policy;
  const runtime::Credentials& user = *policy.default_user;
  if (Status passable = runtime::CheckPassable(working_dir, user); !passable.ok()) {
    return InvalidArgumentError(fmt::format(
        "replicas run as {}{} could not reach the working directory: {}; run from a folder they "
        "may pass through, or give --run-as root (or another user)",
        user.name, options.run_as.empty() ? " (trainyard is root)" : "", passable.message()));
  }
  RETURN_IF_ERROR(CheckHomeReachable(home, policy));
  if (options.run_as.empty() && !options.quiet) {
    fmt::print(stderr,
               "replicas run as {}, as trainyard is root (--run-as root runs them as root)\n",
               user.name);
  }
  return policy;
}

}  // namespace

int64_t PodMaxPids(int64_t flag) { return flag == 0 ? node::DefaultPodMaxPids() : flag; }

std::string DefaultHome() {
  if (const char* home = std::getenv("TRAINYARD_HOME"); home != nullptr && *home != '\0')
    return home;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/trainyard";
  }
  // Root's, as a system daemon's: under /root (0700) the folders its
  // replicas are given would be out of their users' reach.
  if (geteuid() == 0) return "/var/lib/trainyard";
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.local/state/trainyard";
}

Status CheckHomeReachable(const std::string& home, const runtime::RunAsPolicy& policy) {
  std::vector<runtime::Credentials> users;
  if (policy.default_user) users.push_back(*policy.default_user);
  for (const auto& [namespace_, user] : policy.namespaces) users.push_back(user);
  std::error_code ec;
  std::string above = std::filesystem::absolute(home, ec).lexically_normal().parent_path();
  for (const runtime::Credentials& user : users) {
    if (Status passable = runtime::CheckPassable(above, user); !passable.ok()) {
      return InvalidArgumentError(fmt::format(
          "replicas run as {} (--run-as) could not reach their folders under {}: {}; give "
          "--home under a folder they may pass through (root's default is /var/lib/trainyard), "
          "or --run-as root",
          user.name, home, passable.message()));
    }
  }
  return OkStatus();
}

void MakePassable(const std::vector<std::string>& dirs, const runtime::RunAsPolicy& policy) {
  if (!policy.default_user && policy.namespaces.empty()) return;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    std::filesystem::permissions(dir,
                                 std::filesystem::perms::owner_all |
                                     std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_exec,
                                 ec);
  }
}

std::string ShimBeside(const std::string& self, const std::string& without) {
  std::string shim = (std::filesystem::path(self).parent_path() / "trainyard-shim").string();
  if (access(shim.c_str(), X_OK) == 0) return shim;
  std::cerr << "warning: " << shim << " is missing: " << without << '\n';
  return "";
}

SandboxChoice ChooseSandbox(bool no_sandbox) {
  if (no_sandbox) return {"", "--no-sandbox"};
  std::string bwrap = node::FindBwrap();
  if (bwrap.empty()) return {"", "bubblewrap is not installed; apt install bubblewrap"};
  return {bwrap, ""};
}

namespace {

bool IsExperiment(const api::Object& object) {
  return std::holds_alternative<api::Experiment>(object);
}

bool IsOptimizationJob(const api::Object& object) {
  return api::KindName(object) == "OptimizationJob";
}

bool PushesMetrics(const api::Object& object) {
  const auto* experiment = std::get_if<api::Experiment>(&object);
  if (experiment == nullptr) return false;
  const auto& mc = experiment->spec.metrics_collector_spec;
  return mc && mc->collector && mc->collector->kind == "Push";
}

bool IsWorkload(const api::Object& object) { return api::IsWorkloadKind(api::KindName(object)); }

// What `run` runs: jobs and experiments, which it waits for (their trials'
// jobs are the experiments' business), and Deployments, which run beside
// them until they end, or until the run is stopped where there are none.
bool IsRunnable(const api::Object& object) {
  return api::IsJobKind(api::KindName(object)) || IsExperiment(object) ||
         IsOptimizationJob(object) || IsWorkload(object);
}

}  // namespace

namespace {

// A Deployment's pods that name a service account mean to reach an API
// server (an operator): without --kubeconfig they are given none, said.
void NoteServiceAccounts(const LoadedManifests& loaded) {
  for (const LoadedObject& object : loaded.objects) {
    if (!IsWorkload(*object.checked.object)) continue;
    std::string account =
        api::StringAt(object.document, {"spec", "template", "spec", "serviceAccountName"});
    if (account.empty()) continue;
    fmt::print(stderr,
               "note: {}: its pods' service account {} is given no API server to reach; give "
               "--kubeconfig to give them one\n",
               object.Describe(), account);
  }
}

}  // namespace

// --without-gpus: each object's GPUs dropped, and said once per object.
void WithoutGpus(LoadedManifests& loaded) {
  for (LoadedObject& object : loaded.objects) {
    int64_t gpus = DropGpus(object.document);
    object.checked = api::DecodeAndValidate(object.document);
    if (gpus == 0) continue;
    fmt::print(stderr,
               "warning: {}: --without-gpus: {} GPU{} dropped; its replicas run on the CPU, with "
               "CUDA_VISIBLE_DEVICES empty\n",
               object.Describe(), gpus, gpus == 1 ? "" : "s");
  }
}

// Node objects among the manifests: the simulated inventory, as --nodes
// reads it (examples/scheduling/cluster.yaml), taken out of what runs.
Result<std::vector<scheduler::Node>> TakeNodes(LoadedManifests& loaded) {
  std::vector<scheduler::Node> nodes;
  std::vector<LoadedObject> rest;
  for (LoadedObject& object : loaded.objects) {
    if (!engine::IsNodeDocument(object.document) ||
        api::StringAt(object.document, "apiVersion") != "v1") {
      rest.push_back(std::move(object));
      continue;
    }
    ASSIGN_OR_RETURN(scheduler::Node node, engine::NodeFromDocument(object.document, object.where));
    nodes.push_back(std::move(node));
  }
  loaded.objects = std::move(rest);
  return nodes;
}

// Namespace objects among the manifests (an operator's install has one):
// a run makes the namespaces its objects name as it stores them, so they
// are checked and taken out of what runs. An error names the one that is
// wrong.
Status TakeNamespaces(LoadedManifests& loaded) {
  std::vector<LoadedObject> rest;
  for (LoadedObject& object : loaded.objects) {
    const api::Json& doc = object.document;
    if (api::StringAt(doc, "kind") != "Namespace" || api::StringAt(doc, "apiVersion") != "v1") {
      rest.push_back(std::move(object));
      continue;
    }
    std::string name = api::StringAt(doc, {"metadata", "name"});
    api::NameProblems problems = api::Dns1123LabelProblems(name);
    if (name.empty()) problems = {"Required value"};
    if (!problems.empty()) {
      return InvalidArgumentError(fmt::format("{}: Namespace \"{}\": metadata.name: {}",
                                              object.where, name, problems.front()));
    }
  }
  loaded.objects = std::move(rest);
  return OkStatus();
}

namespace {

// The manifests to run and the inventory to place them on, or the exit
// code of what is wrong with them (said).
struct RunPlan {
  LoadedManifests loaded;
  std::vector<scheduler::Node> nodes;
  image::ImageGcPolicy image_gc;
};

std::variant<RunPlan, int> PlanRun(const RunOptions& options) {
  RunPlan plan{.loaded = LoadManifests(options.paths, std::cerr)};
  LoadedManifests& loaded = plan.loaded;
  Result<std::vector<scheduler::Node>> listed = TakeNodes(loaded);
  if (Status namespaces = TakeNamespaces(loaded); !namespaces.ok()) listed = namespaces;
  if (!listed.ok()) {
    std::cerr << "trainyard run: " << listed.status().message() << '\n';
    return 1;
  }
  if (!listed->empty() && !options.nodes_file.empty()) {
    std::cerr << "trainyard run: Node objects among the manifests and --nodes: give the "
                 "simulated inventory one way\n";
    return 1;
  }
  if (options.without_gpus) WithoutGpus(loaded);
  if (!CheckRunnable(loaded)) return 1;
  if (options.kubeconfig.empty()) NoteServiceAccounts(loaded);
  bool has_job = std::any_of(loaded.objects.begin(), loaded.objects.end(),
                             [](const auto& o) { return IsRunnable(*o.checked.object); });
  if (!has_job) {
    std::cerr << "trainyard run: no jobs, experiments or deployments to run\n";
    return 1;
  }
  plan.nodes = std::move(*listed);
  if (!plan.nodes.empty()) {
    fmt::print(stderr, "a simulated inventory of {} node{} from the manifests (as --nodes)\n",
               plan.nodes.size(), plan.nodes.size() == 1 ? "" : "s");
  }
  if (!options.nodes_file.empty()) {
    Result<std::vector<scheduler::Node>> read = engine::ReadNodesFile(options.nodes_file);
    if (!read.ok()) {
      std::cerr << "trainyard run: --nodes: " << read.status().message() << '\n';
      return 1;
    }
    plan.nodes = std::move(*read);
  }
  Result<image::ImageGcPolicy> gc = options.images.Policy();
  if (!gc.ok()) {
    std::cerr << "trainyard run: " << gc.status().message() << '\n';
    return 1;
  }
  plan.image_gc = *gc;
  return plan;
}

// The run's own API on loopback, for pushed metrics, MLflow and the
// dashboard; an error only where Push trials or --ui need it.
Result<std::string> ServeRunApi(const RunOptions& options, const LoadedManifests& loaded,
                                engine::Engine& engine, LocalApi& api) {
  Result<std::string> api_url = api.Start(engine);
  if (!api_url.ok()) {
    bool needed =
        options.ui || std::any_of(loaded.objects.begin(), loaded.objects.end(),
                                  [](const auto& o) { return PushesMetrics(*o.checked.object); });
    std::cerr << fmt::format(
        "trainyard run: {}: cannot serve its API on loopback (for pushed metrics, MLflow and "
        "the dashboard): {}\n",
        needed ? "error" : "warning", api_url.status().message());
    if (needed) return api_url.status();
  }
  if (options.ui && api_url.ok()) fmt::print(stderr, "dashboard: {}\n", api.DashboardUrl(*api_url));
  return api_url.ok() ? *api_url : "";
}

// ConfigMaps, Secrets, claims and queues go first, so that no replica
// starts before what it mounts, nor a job before the queue it names.
bool SubmitAll(const LoadedManifests& loaded, engine::Engine& engine, std::vector<JobView>& jobs,
               std::vector<std::unique_ptr<TuningView>>& experiments) {
  for (bool want_jobs : {false, true}) {
    for (const LoadedObject& object : loaded.objects) {
      bool is_job = IsRunnable(*object.checked.object);
      if (is_job != want_jobs) continue;
      Result<store::ObjectKey> key = engine.Submit(*object.checked.object);
      if (!key.ok()) {
        std::cerr << fmt::format("{}: {}: {}\n", object.where, object.Describe(),
                                 key.status().message());
        return false;
      }
      if (IsExperiment(*object.checked.object)) {
        experiments.push_back(std::make_unique<ExperimentView>(engine.store(), *key, stdout));
      } else if (IsOptimizationJob(*object.checked.object)) {
        experiments.push_back(std::make_unique<OptimizationView>(engine.store(), *key, stdout));
      } else if (is_job) {
        jobs.push_back({.key = *key, .workload = IsWorkload(*object.checked.object)});
      }
    }
  }
  return true;
}

// How each job and experiment ended, and where its output is; true when
// every one succeeded.
bool ReportEnds(const RunOptions& options, engine::Engine& engine, Duration elapsed,
                std::vector<JobView>& jobs, std::vector<std::unique_ptr<TuningView>>& experiments,
                const std::string& state_dir) {
  bool all_succeeded = true;
  for (JobView& view : jobs) {
    Refresh(engine, view);
    if (view.workload) {
      if (!options.quiet) {
        fmt::print(stderr, "{}: stopped with the run ({})\n", view.key.ToString(), view.state);
      }
      continue;
    }
    all_succeeded = all_succeeded && view.succeeded;
    if (options.quiet && view.succeeded) continue;
    if (view.took == Duration{}) view.took = elapsed;  // stopped with the run
    fmt::print(stderr, "{}: {} after {:.1f}s{}\n", view.key.ToString(), view.state,
               std::chrono::duration<double>(view.took).count(),
               view.message.empty() ? "" : " (" + view.message + ")");
    std::error_code ec;
    if (!view.output_dir.empty() && !std::filesystem::is_empty(view.output_dir, ec) && !ec) {
      fmt::print(stderr, "  artifacts: {}\n", view.output_dir);
    }
    if (!view.succeeded && view.message.find("can never fit") != std::string::npos &&
        view.message.find("gpu") != std::string::npos && !options.without_gpus) {
      fmt::print(stderr, "  to try it on this machine's CPU instead, run it with --without-gpus\n");
    }
  }
  for (const std::unique_ptr<TuningView>& view : experiments) {
    view->Poll();
    all_succeeded = all_succeeded && view->succeeded();
    view->PrintSummary(stdout, state_dir + "/logs");
  }
  if (!options.quiet) {
    fmt::print(stderr, "state and logs: {}\n", state_dir);
    fmt::print(stderr,
               "  read back with --run: trainyard metrics|artifacts|get|describe ... --run {}\n",
               state_dir);
  }
  return all_succeeded;
}

// The kubelet's image GC after a run's pulls, keeping what it runs in.
void CollectImages(const image::ImageStore& images, const std::map<std::string, ImageNeed>& needed,
                   const image::ImageGcPolicy& gc) {
  auto in_use = [&]() -> Result<std::set<std::string>> {
    std::set<std::string> out;
    for (const auto& [text, need] : needed) {
      Result<image::ImageReference> ref = image::ParseImageReference(text);
      if (ref.ok()) out.insert(ref->String());
    }
    return out;
  };
  Result<image::GcResult> collected =
      image::CollectImages(images, gc, in_use, std::chrono::system_clock::now());
  if (!collected.ok()) {
    std::cerr << "warning: image garbage collection failed: " << collected.status().message()
              << '\n';
    return;
  }
  for (const std::string& reference : collected->pruned.removed) {
    std::cerr << image::DescribeRemoval(reference, *collected, gc) << '\n';
  }
}

// Without --root host: the images the manifests' pods run in (those that
// ask for the machine's files aside), pulled (or found) first; false when
// one cannot be (said). Only root mounts their roots: said before a pull.
bool PullFirst(const LoadedManifests& loaded, const std::string& home,
               const image::ImageGcPolicy& gc) {
  std::map<std::string, ImageNeed> needed = ImagesOf(loaded);
  if (needed.empty()) return true;
  if (geteuid() != 0) {
    std::vector<std::string> names;
    for (const auto& [name, need] : needed) names.push_back(name);
    std::cerr << fmt::format(
        "trainyard run: these containers run in their images ({}), whose roots trainyard mounts "
        "only when it runs as root: run it as root, or run them on this machine's files (their "
        "pod templates annotated {}: {}, or --root host; docs/images.md)\n",
        fmt::join(names, ", "), api::kRootAnnotation, api::kHostRoot);
    return false;
  }
  image::ImageStore images(home + "/images", {.privileged = true});
  Status pulled = PullImages(images, loaded, needed, std::cerr);
  if (pulled.ok()) CollectImages(images, needed, gc);
  if (!pulled.ok()) {
    std::cerr << "trainyard run: " << pulled.message() << '\n'
              << fmt::format(
                     "  (a container whose command runs this machine's programs needs no image: "
                     "annotate its pod template {}: {}, or give --root host; docs/images.md)\n",
                     api::kRootAnnotation, api::kHostRoot);
  }
  return pulled.ok();
}

// --logs, or -q for none.
LogMode LogModeOf(const RunOptions& options) {
  std::string wanted = !options.logs.empty() ? options.logs : options.quiet ? "none" : "all";
  return wanted == "none" ? LogMode::kNone : wanted == "master" ? LogMode::kMaster : LogMode::kAll;
}

// The run's control plane: its replicas' user, the API server its pods
// are given, its images pulled; null when one cannot be had (said).
std::unique_ptr<engine::Engine> StartEngine(const RunOptions& options, RunPlan& plan,
                                            const std::string& home, const std::string& state_dir) {
  std::error_code ec;
  Result<runtime::RunAsPolicy> run_as =
      RunAsFor(options, home, std::filesystem::current_path(ec).string());
  if (!run_as.ok()) {
    std::cerr << "trainyard run: " << run_as.status().message() << '\n';
    return nullptr;
  }
  std::optional<node::ApiAccess> api_access;
  if (!options.kubeconfig.empty()) {
    Result<node::ApiAccess> loaded = LoadApiAccess(options.kubeconfig);
    if (!loaded.ok()) {
      std::cerr << "trainyard run: " << loaded.status().message() << '\n';
      return nullptr;
    }
    api_access = *std::move(loaded);
  }
  if (options.root != "host" && !PullFirst(plan.loaded, home, plan.image_gc)) return nullptr;
  Result<std::unique_ptr<engine::Engine>> created = BuildControlPlane(
      {.home = home,
       .state_dir = state_dir,
       .run_as = *run_as,
       .no_sandbox = options.no_sandbox,
       .root = options.root,
       .image_gc = plan.image_gc,
       .cdi_spec_dirs = options.images.cdi_spec_dirs,
       .pod_max_pids = options.pod_max_pids,
       .nodes = std::move(plan.nodes),
       .without_shim = "daemons a replica starts outside its process group may outlive it, and "
                       "replicas run without sandboxes",
       .passable = {home, home + "/runs"}},
      // The run's directory is its record: every replica's log stays.
      [&](engine::EngineOptions& o) {
        o.keep_logs = true;
        o.api_access = api_access;
      });
  if (!created.ok()) {
    std::cerr << "trainyard run: " << created.status().message() << '\n';
    return nullptr;
  }
  return *std::move(created);
}

}  // namespace

int RunRun(const RunOptions& options) {
  std::variant<RunPlan, int> planned = PlanRun(options);
  if (const int* code = std::get_if<int>(&planned)) return *code;
  RunPlan& plan = std::get<RunPlan>(planned);
  std::string home = options.home.empty() ? DefaultHome() : options.home;
  std::string state_dir = home + "/runs/" + RunDirName(RealClock::Get().Now());
  std::unique_ptr<engine::Engine> started = StartEngine(options, plan, home, state_dir);
  if (started == nullptr) return 1;
  engine::Engine& engine = *started;
  LocalApi api(engine);
  Result<std::string> api_url = ServeRunApi(options, plan.loaded, engine, api);
  if (!api_url.ok()) return 1;
  std::vector<JobView> jobs;
  std::vector<std::unique_ptr<TuningView>> experiments;
  if (!SubmitAll(plan.loaded, engine, jobs, experiments)) return 1;

  StopOnSignals stop_on_signals(engine, {SIGINT, SIGTERM, SIGHUP});
  // Trials' logs would interleave: an experiment shows its table instead,
  // unless logs are asked for; the jobs beside it show theirs.
  std::vector<std::string> trial_prefixes;
  for (const LoadedObject& object : plan.loaded.objects) {
    if (!IsOptimizationJob(*object.checked.object)) continue;
    std::string first =
        controller::OptimizationTrialName(api::Metadata(*object.checked.object).name, 0);
    trial_prefixes.push_back(first.substr(0, first.size() - 1));
  }
  LogTail logs(engine, LogModeOf(options), jobs.size() > 1, stdout,
               /*hide_trials=*/options.logs.empty() && !experiments.empty(),
               std::move(trial_prefixes));
  bool tty = isatty(STDERR_FILENO) != 0 && !options.quiet;
  StatusLine status_line(engine, tty, options.quiet);
  auto on_step = [&] {
    status_line.Clear();
    logs.Poll();
    status_line.Show(jobs, experiments);
  };
  // Deployments alone run until the run is stopped; beside jobs, until
  // the jobs end.
  bool waits = !experiments.empty() ||
               std::any_of(jobs.begin(), jobs.end(), [](const JobView& v) { return !v.workload; });
  if (!waits && !options.quiet) {
    fmt::print(stderr, "deployments run until stopped (Ctrl-C or SIGTERM)\n");
  }
  auto all_done = [&] {
    return waits &&
           std::all_of(jobs.begin(), jobs.end(),
                       [](const JobView& v) { return v.workload || v.finished; }) &&
           std::all_of(experiments.begin(), experiments.end(),
                       [](const auto& v) { return v->finished(); });
  };
  Status status = engine.Run(all_done, on_step);
  bool interrupted = status.code() == StatusCode::kAborted;
  if (tty) fmt::print(stderr, "\r\033[K");
  if (interrupted)
    fmt::print(stderr, "{}: stopping every replica\n", waits ? "interrupted" : "stopped");
  engine.StopAll();
  logs.Poll(/*flush=*/true);
  if (!status.ok() && !interrupted) std::cerr << "trainyard run: " << status.message() << '\n';
  bool all_succeeded =
      ReportEnds(options, engine, status_line.Elapsed(), jobs, experiments, state_dir) &&
      !interrupted && status.ok();
  // Stopping is how a run of Deployments alone ends: no failure.
  if (interrupted) return waits ? 130 : 0;
  if (options.ui) {
    // The loop goes on, for the dashboard's writes (delete, resubmit),
    // until a signal ends it.
    fmt::print(stderr, "dashboard: {} stays up until Ctrl-C\n", api.DashboardUrl(*api_url));
    (void)engine.Run([] { return false; }, [] {});
    engine.StopAll();
  }
  return all_succeeded ? 0 : 1;
}

}  // namespace trainyard::cli
