// The commands that keep running: server and operator; and the manifests
// that install the operator on a cluster.
#include <iostream>
#include <memory>
#include <string>

#include "cli/command_line.h"
#include "cli/install_manifests.h"
#include "cli/operator_command.h"
#include "cli/server_command.h"

namespace trainyard::cli {

void AddServerCommand(CLI::App& app, int& exit_code) {
  auto server = std::make_shared<ServerOptions>();
  CLI::App* server_cmd = app.add_subcommand(
      "server", "Keep the control plane up behind a Kubernetes-style API (kubectl works with it)");
  server_cmd
      ->add_option("--address", server->address,
                   "Address to listen on (loopback unless told otherwise)")
      ->capture_default_str();
  server_cmd->add_option("--port", server->port, "Port to listen on; 0 for any free one")
      ->capture_default_str();
  server_cmd->add_option("--home", server->home, "As for run: the server keeps <home>/server/");
  server_cmd->add_option("--tls-cert", server->tls_cert, "Serve HTTPS with this certificate (PEM)");
  server_cmd->add_option("--tls-key", server->tls_key, "The certificate's private key (PEM)");
  server_cmd->add_option("--token-file", server->token_file,
                         "Require bearer tokens: lines of TOKEN USER NAMESPACES (or *)");
  server_cmd->add_option("--run-as", server->run_as,
                         "Run replicas as this user (default: nobody when the server is root, "
                         "else the server's own user; root only if named)");
  server_cmd->add_option("--run-as-namespace", server->run_as_namespace,
                         "NAMESPACE=USER: that namespace's replicas run as USER (repeatable)");
  server_cmd->add_flag("--allow-unauthenticated", server->allow_unauthenticated,
                       "Allow a non-loopback --address without --token-file (anyone who reaches "
                       "it can run anything)");
  server_cmd->add_flag("--no-sandbox", server->no_sandbox, kNoSandboxHelp);
  server_cmd->add_option("--root", server->root, kRootHelp)
      ->check(CLI::IsMember({"image", "host", "image-only"}))
      ->capture_default_str();
  AddImageFlags(*server_cmd, server->images);
  server_cmd
      ->add_option("--keep-artifacts", server->keep_artifacts,
                   "How long a deleted job's artifacts are kept (a duration: 168h, 30m; 0s "
                   "removes them with the job)")
      ->capture_default_str();
  server_cmd->add_flag("--api-only", server->api_only,
                       "Serve the store and the API only, as kube-apiserver does: no controller, "
                       "scheduler or replica runs (for `trainyard operator` and its tests)");
  server_cmd->add_option("--pod-max-pids", server->pod_max_pids, kPodMaxPidsHelp)
      ->check(CLI::Range(int64_t{-1}, int64_t{1} << 22));
  server_cmd->add_option("--nodes", server->nodes_file,
                         "Place pods on the Node objects in this file instead of this machine "
                         "(they all still run here)");
  server_cmd->callback([server, &exit_code] { exit_code = RunServer(*server); });
}

namespace {

// The operator's webhooks, metrics, probes and leader election, named as
// upstream's flags are.
void AddOperatorServingFlags(CLI::App* operator_cmd, OperatorOptions* op) {
  operator_cmd
      ->add_option("--webhook-server-port", op->webhook_server_port,
                   "Port of the admission webhooks (0: none)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--trainer-status-port", op->trainer_status_port,
                   "With --trainer, the port TrainJobs' trainers report their progress to "
                   "(KEP-2779's status server, HTTPS with the webhooks' certificate; 0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  operator_cmd
      ->add_option("--webhook-service-name", op->webhook_service_name,
                   "The webhooks' Service, whose DNS name their certificate carries")
      ->capture_default_str();
  operator_cmd
      ->add_option("--webhook-secret-name", op->webhook_secret_name,
                   "The Secret their self-managed certificate is kept in")
      ->capture_default_str();
  operator_cmd
      ->add_option("--metrics-bind-address", op->metrics_bind_address,
                   "Where /metrics is served ([host]:port; 0 for nowhere)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--health-probe-bind-address", op->health_probe_bind_address,
                   "Where /healthz and /readyz are served ([host]:port; 0 for nowhere)")
      ->capture_default_str();
  operator_cmd->add_flag("--leader-elect", op->leader_elect,
                         "Of several replicas only the holder of a coordination.k8s.io Lease acts");
  operator_cmd
      ->add_option("--leader-elect-lease-duration", op->lease_duration,
                   "How long a lease not renewed keeps others waiting")
      ->capture_default_str();
  operator_cmd
      ->add_option("--leader-elect-renew-deadline", op->renew_deadline,
                   "How long the leader tries to renew before it stops acting")
      ->capture_default_str();
  operator_cmd
      ->add_option("--leader-elect-retry-period", op->retry_period,
                   "How often candidates try and the leader renews")
      ->capture_default_str();
}

}  // namespace

void AddOperatorCommand(CLI::App& app, int& exit_code) {
  auto op = std::make_shared<OperatorOptions>();
  CLI::App* operator_cmd =
      app.add_subcommand("operator",
                         "Run the job controllers against a Kubernetes API server, as upstream's "
                         "training-operator does");
  operator_cmd->add_option("--kubeconfig", op->kubeconfig,
                           "The kubeconfig (default: $KUBECONFIG, in a pod its service account, "
                           "else ~/.kube/config)");
  operator_cmd->add_option("--context", op->context, "The kubeconfig's context to use");
  operator_cmd->add_option("--namespace", op->namespace_,
                           "Only this namespace (default: $KUBEFLOW_NAMESPACE, else every one)");
  operator_cmd->add_option("--enable-scheme", op->enable_schemes,
                           "A job kind to reconcile (repeatable; default: every one): pytorchjob, "
                           "tfjob, xgboostjob, mpijob, paddlejob, jaxjob");
  operator_cmd->add_option("--gang-scheduler-name", op->gang_scheduler_name,
                           "Gang scheduling: volcano (Volcano's PodGroups), trainyard (trainyard "
                           "places the pods itself), or the name of a scheduler-plugins "
                           "coscheduling scheduler");
  operator_cmd
      ->add_option("--pytorch-init-container-image", op->pytorch_init_container_image,
                   "The image of a PyTorchJob's workers' init-pytorch container")
      ->capture_default_str();
  operator_cmd
      ->add_option("--mpi-kubectl-delivery-image", op->mpi_kubectl_delivery_image,
                   "The image of an MPIJob launcher's kubectl-delivery init container")
      ->capture_default_str();
  operator_cmd
      ->add_option("--pytorch-init-container-max-tries", op->pytorch_init_container_max_tries,
                   "How often init-pytorch looks up the master (2 s apart)")
      ->capture_default_str();
  operator_cmd
      ->add_option("--controller-threads", op->controller_threads,
                   "As upstream's flag; reconciles run on one thread")
      ->capture_default_str();
  operator_cmd
      ->add_option("--kube-api-qps", op->kube_api_qps, "Requests a second to the API server")
      ->capture_default_str();
  operator_cmd->add_option("--kube-api-burst", op->kube_api_burst, "Requests at once after a lull")
      ->capture_default_str();
  AddOperatorServingFlags(operator_cmd, op.get());
  operator_cmd->add_flag("--trainer", op->trainer,
                         "Also run Kubeflow Trainer v2's TrainJobs: each becomes the JobSet its "
                         "runtime makes, which the cluster's JobSet controller runs");
  operator_cmd->add_flag("--katib", op->katib,
                         "Also reconcile Katib's Experiments, Trials and Suggestions (trials "
                         "push their metrics: the Push collector)");
  operator_cmd->add_option("--state-dir", op->state_dir,
                           "With --katib: where the trials' observation log is kept (a volume)");
  operator_cmd->add_option("--katib-push-url", op->katib_push_url,
                           "With --katib: the URL trials push metrics to (default: the webhook "
                           "Service's DNS name at the metrics port, over HTTP)");
  operator_cmd->callback([op, &exit_code] { exit_code = RunOperator(*op); });
}

void AddManifestsCommand(CLI::App& app, int& exit_code) {
  auto install = std::make_shared<InstallOptions>();
  auto what = std::make_shared<std::string>();
  CLI::App* manifests_cmd = app.add_subcommand(
      "manifests", "Print what `kubectl apply -f -` needs to run the operator on a cluster");
  manifests_cmd->add_option("what", *what, "crds, rbac, webhooks, operator or all")->required();
  manifests_cmd->add_option("--namespace", install->namespace_, "Where the operator runs")
      ->capture_default_str();
  manifests_cmd->add_option("--image", install->image, "The operator's container image")
      ->capture_default_str();
  manifests_cmd->callback([install, what, &exit_code] {
    exit_code = RunManifests(*what, *install, std::cout, std::cerr);
  });
}

}  // namespace trainyard::cli
