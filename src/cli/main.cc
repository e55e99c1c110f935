// The trainyard command line: one binary, one verb per subcommand.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/artifacts_command.h"
#include "cli/client_commands.h"
#include "cli/exec_command.h"
#include "cli/initialize_command.h"
#include "cli/install_manifests.h"
#include "cli/operator_command.h"
#include "cli/run_command.h"
#include "cli/server_command.h"
#include "cli/validate_command.h"

namespace {
constexpr const char* kVersion = TRAINYARD_VERSION;
}

int main(int argc, char** argv) {
  // What trainyard writes (state, logs, kubeconfig, volumes) is its owner's
  // alone unless it says otherwise, as etcd's data directory is: a state
  // database holds every namespace's objects and trials' push tokens.
  // Replicas start with a container's 022 again (runtime/local/process.h).
  umask(077);
  CLI::App app{"trainyard: runs Kubeflow training jobs and Katib experiments, standalone"};
  app.require_subcommand(1);
  app.set_version_flag("--version", kVersion);

  trainyard::cli::ValidateOptions validate;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check manifests: every error of every object, with its field path");
  validate_cmd->add_option("files", validate.paths, "Manifest files or directories; - for stdin")
      ->required();
  validate_cmd->add_flag("--show-defaults", validate.show_defaults,
                         "Print each valid object with upstream's defaults applied");
  validate_cmd->add_option("-o,--output", validate.output, "Format for --show-defaults")
      ->check(CLI::IsMember({"yaml", "json"}));
  validate_cmd->add_flag("-q,--quiet", validate.quiet, "Print only problems");

  trainyard::cli::RunOptions run;
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Run jobs and tuning experiments on this machine, in the foreground, until they finish");
  run_cmd->add_option("files", run.paths, "Manifest files or directories; - for stdin")->required();
  run_cmd->add_flag("-q,--quiet", run.quiet, "No status line; print only what failed");
  run_cmd
      ->add_option("--logs", run.logs,
                   "Which replicas' logs to print (default: all but trials', which an "
                   "experiment's table stands for; none with -q)")
      ->check(CLI::IsMember({"all", "master", "none"}));
  run_cmd->add_option("--home", run.home,
                      "Where runs keep their state and logs (default: $TRAINYARD_HOME, else "
                      "$XDG_STATE_HOME/trainyard, else /var/lib/trainyard for root and "
                      "~/.local/state/trainyard for anyone else)");
  run_cmd->add_option("--run-as", run.run_as,
                      "Run replicas as this user (default: nobody when trainyard is root, else "
                      "yourself; root only if named)");
  run_cmd->add_flag("--without-gpus", run.without_gpus,
                    "Run a GPU manifest on the CPU: drop its GPU requests and set "
                    "CUDA_VISIBLE_DEVICES empty (said once per job)");
  const char* no_sandbox_help =
      "Run replicas without a sandbox of their own (bubblewrap): volumes reached through path "
      "rewriting instead of at their mountPath, and the machine's host name";
  run_cmd->add_flag("--no-sandbox", run.no_sandbox, no_sandbox_help);
  run_cmd->add_flag("--ui", run.ui,
                    "Serve the dashboard for this run on loopback (its URL is printed), and keep "
                    "serving it after the run ends, until Ctrl-C");
  const char* pod_max_pids_help =
      "The processes and threads one pod may have at once, as the kubelet's --pod-max-pids "
      "(default: an eighth of kernel.pid_max, at most 16384; -1: no bound)";
  run_cmd->add_option("--pod-max-pids", run.pod_max_pids, pod_max_pids_help)
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 22));
  run_cmd->add_option("--nodes", run.nodes_file,
                      "Place pods on the Node objects in this file instead of this machine "
                      "(they all still run here)");

  trainyard::cli::ExecOptions exec;
  CLI::App* exec_cmd = app.add_subcommand(
      "exec",
      "Run a command inside a running replica: its env, working directory and process group");
  exec_cmd->add_option("pod", exec.pod, "The replica's pod name, e.g. mnist-worker-0")->required();
  exec_cmd->add_option("command", exec.command, "The command and its arguments, after --")
      ->required();
  exec_cmd->add_option("-n,--namespace", exec.namespace_, "The pod's namespace")
      ->capture_default_str();
  exec_cmd->add_option("--state", exec.state,
                       "The run's state directory (default: the newest run under --home)");
  exec_cmd->add_option("--home", exec.home, "As for run");
  exec_cmd->add_option("-c,--container", exec.container,
                       "The pod's container to run it beside (default: its first)");
  exec_cmd->add_flag("--own-process-group", exec.own_process_group,
                     "Stay in the process group it was started in (the server's exec sessions)");

  trainyard::cli::ServerOptions server;
  trainyard::cli::InitializeOptions initialize;
  CLI::App* initialize_cmd = app.add_subcommand(
      "initialize",
      "Fetch a TrainJob's dataset or model (STORAGE_URI) into DEST, as Kubeflow's "
      "initializer images do; run by the TrainJob controller in an initializer step");
  initialize_cmd->add_option("what", initialize.what, "dataset or model")
      ->required()
      ->check(CLI::IsMember({"dataset", "model"}));
  initialize_cmd->add_option("destination", initialize.destination, "Where: /workspace/dataset")
      ->required();
  CLI::App* server_cmd = app.add_subcommand(
      "server", "Keep the control plane up behind a Kubernetes-style API (kubectl works with it)");
  server_cmd
      ->add_option("--address", server.address,
                   "Address to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  server_cmd->add_option("--port", server.port, "Port to listen on; 0 for any free one")
      ->capture_default_str();
  server_cmd->add_option("--home", server.home, "As for run: the server keeps <home>/server/");
  server_cmd->add_option("--tls-cert", server.tls_cert, "Serve HTTPS with this certificate (PEM)");
  server_cmd->add_option("--tls-key", server.tls_key, "The certificate's private key (PEM)");
  server_cmd->add_option("--token-file", server.token_file,
                         "Require bearer tokens: lines of TOKEN USER NAMESPACES (or *)");
  server_cmd->add_option("--run-as", server.run_as,
                         "Run replicas as this user (default: nobody when the server is root, "
                         "else the server's own user; root only if named)");
  server_cmd->add_option("--run-as-namespace", server.run_as_namespace,
                         "NAMESPACE=USER: that namespace's replicas run as USER (repeatable)");
  server_cmd->add_flag("--allow-unauthenticated", server.allow_unauthenticated,
                       "Allow a non-loopback --address without --token-file (anyone who reaches "
                       "it can run anything)");
  server_cmd->add_flag("--no-sandbox", server.no_sandbox, no_sandbox_help);
  server_cmd
      ->add_option("--keep-artifacts", server.keep_artifacts,
                   "How long a deleted job's artifacts are kept (a duration: 168h, 30m; 0s "
                   "removes them with the job)")
      ->capture_default_str();
  server_cmd->add_flag("--api-only", server.api_only,
                       "Serve the store and the API only, as kube-apiserver does: no controller, "
                       "scheduler or replica runs (for `trainyard operator` and its tests)");
  server_cmd->add_option("--pod-max-pids", server.pod_max_pids, pod_max_pids_help)
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 22));
  server_cmd->add_option("--nodes", server.nodes_file,
                         "Place pods on the Node objects in this file instead of this machine "
                         "(they all still run here)");

  trainyard::cli::OperatorOptions op;
  CLI::App* operator_cmd =
      app.add_subcommand("operator",
                         "Run the job controllers against a Kubernetes API server, as upstream's "
                         "training-operator does");
  operator_cmd->add_option("--kubeconfig", op.kubeconfig,
                           "The kubeconfig (default: $KUBECONFIG, in a pod its service account, "
                           "else ~/.kube/config)");
  operator_cmd->add_option("--context", op.context, "The kubeconfig's context to use");
  operator_cmd->add_option("--namespace", op.namespace_,
                           "Only this namespace (default: $KUBEFLOW_NAMESPACE, else every one)");
  operator_cmd->add_option("--enable-scheme", op.enable_schemes,
                           "A job kind to reconcile (repeatable; default: every one): pytorchjob, "
                           "tfjob, xgboostjob, mpijob, paddlejob, jaxjob");
  operator_cmd->add_option("--gang-scheduler-name", op.gang_scheduler_name,
                           "Gang scheduling: volcano (Volcano's PodGroups), trainyard (trainyard "
                           "places the pods itself), or the name of a scheduler-plugins "
                           "coscheduling scheduler");
  operator_cmd
      ->add_option("--pytorch-init-container-image", op.pytorch_init_container_image,
                   "The image of a PyTorchJob's workers' init-pytorch container")
      ->capture_default_str();
  operator_cmd
      ->add_option("--mpi-kubectl-delivery-image", op.mpi_kubectl_delivery_image,
                   "The image of an MPIJob launcher's kubectl-delivery init container")
      ->capture_default_str();
  operator_cmd
      ->add_option("--pytorch-init-container-max-tries", op.pytorch_init_container_max_tries,
                   "How often init-pytorch looks up the master (2 s apart)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--controller-threads", op.controller_threads,
                   "As upstream's flag; reconciles run on one thread")
      ->capture_default_str();
  operator_cmd->add_option("--kube-api-qps", op.kube_api_qps, "Requests a second to the API server")
      ->capture_default_str();
  operator_cmd->add_option("--kube-api-burst", op.kube_api_burst, "Requests at once after a lull")
      ->capture_default_str();
  operator_cmd
      ->add_option("--webhook-server-port", op.webhook_server_port,
                   "Port of the admission webhooks (0: none)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--webhook-service-name", op.webhook_service_name,
                   "The webhooks' Service, whose DNS name their certificate carries")
      ->capture_default_str();
  operator_cmd
      ->add_option("--webhook-secret-name", op.webhook_secret_name,
                   "The Secret their self-managed certificate is kept in")
      ->capture_default_str();
  operator_cmd
      ->add_option("--metrics-bind-address", op.metrics_bind_address,
                   "Where /metrics is served ([host]:port; 0 for nowhere)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--health-probe-bind-address", op.health_probe_bind_address,
                   "Where /healthz and /readyz are served ([host]:port; 0 for nowhere)")
      ->capture_default_str();
  operator_cmd->add_flag("--leader-elect", op.leader_elect,
                         "Of several replicas only the holder of a coordination.k8s.io Lease acts");
  operator_cmd
      ->add_option("--leader-elect-lease-duration", op.lease_duration,
                   "How long a lease not renewed keeps others waiting")
      ->capture_default_str();
  operator_cmd
      ->add_option("--leader-elect-renew-deadline", op.renew_deadline,
                   "How long the leader tries to renew before it stops acting")
      ->capture_default_str();
  operator_cmd
      ->add_option("--leader-elect-retry-period", op.retry_period,
                   "How often candidates try and the leader renews")
      ->capture_default_str();

  operator_cmd->add_flag("--trainer", op.trainer,
                         "Also run Kubeflow Trainer v2's TrainJobs: each becomes the JobSet its "
                         "runtime makes, which the cluster's JobSet controller runs");
  operator_cmd->add_flag("--katib", op.katib,
                         "Also reconcile Katib's Experiments, Trials and Suggestions (trials "
                         "push their metrics: the Push collector)");
  operator_cmd->add_option("--state-dir", op.state_dir,
                           "With --katib: where the trials' observation log is kept (a volume)");
  operator_cmd->add_option("--katib-push-url", op.katib_push_url,
                           "With --katib: the URL trials push metrics to (default: the webhook "
                           "Service's DNS name at the metrics port, over HTTP)");

  trainyard::cli::InstallOptions install;
  std::string install_what;
  CLI::App* manifests_cmd = app.add_subcommand(
      "manifests", "Print what `kubectl apply -f -` needs to run the operator on a cluster");
  manifests_cmd->add_option("what", install_what, "crds, rbac, webhooks, operator or all")
      ->required();
  manifests_cmd->add_option("--namespace", install.namespace_, "Where the operator runs")
      ->capture_default_str();
  manifests_cmd->add_option("--image", install.image, "The operator's container image")
      ->capture_default_str();

  // The client verbs, for a running server.
  trainyard::cli::ClientCommand client;
  auto client_flags = [&client](CLI::App* cmd) {
    cmd->add_option("--server", client.connection.server,
                    "The server's URL (default: $TRAINYARD_SERVER, else the kubeconfig's)");
    cmd->add_option("--kubeconfig", client.connection.kubeconfig,
                    "The kubeconfig naming the server (default: <--home>/kubeconfig when --home "
                    "is given, else $KUBECONFIG, else the default home's)");
    cmd->add_option("--home", client.connection.home, "A server's home, whose kubeconfig to use");
    cmd->add_option("--run", client.connection.run,
                    "A finished `trainyard run`'s folder (its \"state and logs\"), read back "
                    "instead of a server");
    cmd->add_option("--token", client.connection.token,
                    "A bearer token (default: the kubeconfig's)");
    cmd->add_option("-n,--namespace", client.namespace_, "The namespace (default: default)");
  };
  std::vector<std::string> files, names;
  std::string kind, name, pod, about;
  CLI::App* apply_cmd = app.add_subcommand("apply", "Create or update objects on the server");
  apply_cmd->add_option("-f,--filename", files, "Manifest files or directories; - for stdin")
      ->required();
  client_flags(apply_cmd);
  CLI::App* get_cmd =
      app.add_subcommand("get", "List or show objects: get pytorchjobs, get pods NAME");
  get_cmd
      ->add_option("kind", kind,
                   "pytorchjobs, tfjobs, xgboostjobs, mpijobs, paddlejobs, jaxjobs, jobs, "
                   "trainjobs, jobsets, experiments, trials, suggestions, pods, events, "
                   "namespaces, nodes, configmaps, secrets, services, clusterqueues, queues "
                   "(LocalQueues), priorityclasses, resourcequotas: any plural, singular or "
                   "short name the server serves")
      ->required();
  get_cmd->add_option("names", names, "Only these");
  get_cmd->add_flag("-A,--all-namespaces", client.all_namespaces, "Every namespace");
  get_cmd->add_option("-o,--output", client.output, "wide, yaml or json")
      ->check(CLI::IsMember({"wide", "yaml", "json"}));
  client_flags(get_cmd);
  CLI::App* describe_cmd =
      app.add_subcommand("describe", "A job's conditions, replicas and events");
  describe_cmd->add_option("kind", kind, "The kind: pytorchjob, tfjob, job, ...")->required();
  describe_cmd->add_option("name", name, "The object's name")->required();
  describe_cmd->add_option("-o,--output", client.output, "yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}));
  client_flags(describe_cmd);
  trainyard::cli::LogsOptions logs;
  CLI::App* logs_cmd = app.add_subcommand("logs", "A replica's log: logs mnist-worker-0 [-f]");
  logs_cmd->add_option("pod", pod, "The replica's pod")->required();
  logs_cmd->add_flag("-f,--follow", logs.follow, "Follow it while the replica runs");
  logs_cmd->add_flag("-p,--previous", logs.previous, "The run before the last restart");
  int64_t tail = -1;
  logs_cmd->add_option("--tail", tail, "Only the last N lines");
  logs_cmd->add_option("-c,--container", logs.container, "The container");
  client_flags(logs_cmd);
  std::string metric;
  CLI::App* metrics_cmd = app.add_subcommand(
      "metrics", "A job's own metrics, or a trial's: metrics pytorchjob NAME [--metric loss]");
  metrics_cmd->add_option("kind", kind, "The kind: pytorchjob, tfjob, ..., trial")->required();
  metrics_cmd->add_option("name", name, "The job's name")->required();
  metrics_cmd->add_option("--metric", metric, "Every value of this metric, with its step");
  client_flags(metrics_cmd);
  trainyard::cli::ArtifactsOptions artifacts;
  CLI::App* artifacts_cmd = app.add_subcommand(
      "artifacts",
      "What a job's replicas wrote to $TRAINYARD_OUTPUT_DIR: artifacts pytorchjob NAME [PATH]");
  artifacts_cmd->add_option("kind", artifacts.kind, "The kind: pytorchjob, ..., trial")->required();
  artifacts_cmd->add_option("name", artifacts.name, "The job's name")->required();
  artifacts_cmd->add_option("path", artifacts.path, "One file to download (else: list them)");
  artifacts_cmd->add_option("-o,--output", artifacts.output,
                            "Where the file goes: a path, or - for stdout (default: its own "
                            "name here)");
  client_flags(artifacts_cmd);
  CLI::App* delete_cmd = app.add_subcommand("delete", "Delete objects: delete pytorchjob NAME...");
  delete_cmd->add_option("kind", kind, "The kind")->required();
  delete_cmd->add_option("names", names, "Their names")->required();
  client_flags(delete_cmd);
  CLI::App* suspend_cmd =
      app.add_subcommand("suspend", "Suspend jobs: their replicas stop, the jobs stay");
  CLI::App* resume_cmd = app.add_subcommand("resume", "Resume suspended jobs");
  for (CLI::App* cmd : {suspend_cmd, resume_cmd}) {
    cmd->add_option("kind", kind, "The kind: pytorchjob, ..., job")->required();
    cmd->add_option("names", names, "Their names")->required();
    client_flags(cmd);
  }
  CLI::App* events_cmd = app.add_subcommand("events", "What the controllers did, newest last");
  events_cmd->add_option("--for", about, "Only about this object: KIND/NAME");
  events_cmd->add_flag("-A,--all-namespaces", client.all_namespaces, "Every namespace");
  client_flags(events_cmd);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error exits 2, as is conventional.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (validate_cmd->parsed()) return trainyard::cli::RunValidate(validate, std::cout, std::cerr);
  if (run_cmd->parsed()) return trainyard::cli::RunRun(run);
  if (exec_cmd->parsed()) return trainyard::cli::RunExec(exec);
  if (initialize_cmd->parsed()) return trainyard::cli::RunInitialize(initialize);
  if (server_cmd->parsed()) return trainyard::cli::RunServer(server);
  if (operator_cmd->parsed()) return trainyard::cli::RunOperator(op);
  if (manifests_cmd->parsed()) {
    return trainyard::cli::RunManifests(install_what, install, std::cout, std::cerr);
  }
  if (apply_cmd->parsed()) return trainyard::cli::RunApply(client, files);
  if (get_cmd->parsed()) return trainyard::cli::RunGet(client, kind, names);
  if (describe_cmd->parsed()) return trainyard::cli::RunDescribe(client, kind, name);
  if (logs_cmd->parsed()) {
    if (tail >= 0) logs.tail = tail;
    return trainyard::cli::RunLogs(client, pod, logs);
  }
  if (metrics_cmd->parsed()) return trainyard::cli::RunMetrics(client, kind, name, metric);
  if (artifacts_cmd->parsed()) return trainyard::cli::RunArtifacts(client, artifacts);
  if (delete_cmd->parsed()) return trainyard::cli::RunDelete(client, kind, names);
  if (suspend_cmd->parsed()) return trainyard::cli::RunSuspend(client, kind, names, true);
  if (resume_cmd->parsed()) return trainyard::cli::RunSuspend(client, kind, names, false);
  if (events_cmd->parsed()) return trainyard::cli::RunEvents(client, about);
  return 0;
}
