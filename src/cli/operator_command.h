// `trainyard operator`: the job controllers against a Kubernetes API server,
// with the flags of upstream's training-operator. Pods and headless
// Services are made as upstream makes them; the cluster's scheduler and
// kubelets run them (or, with --gang-scheduler-name trainyard, trainyard's
// own scheduler binds them); with --katib, Katib's Experiments too.
// SIGINT or SIGTERM stops it gracefully (exit 0): the pods it made run on,
// and a restarted operator takes them up again.
#pragma once

#include <string>
#include <vector>

namespace trainyard::cli {

struct OperatorOptions {
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string context;
  std::string namespace_;                   // empty: $KUBEFLOW_NAMESPACE, else every namespace
  std::vector<std::string> enable_schemes;  // empty: every job kind
  std::string gang_scheduler_name;          // "volcano", another gang scheduler, or empty
  std::string pytorch_init_container_image = "alpine:3.10";
  int pytorch_init_container_max_tries = 100;
  std::string mpi_kubectl_delivery_image = "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest";
  int controller_threads = 1;
  double kube_api_qps = 20;
  int kube_api_burst = 30;
  // Of several replicas, only the holder of the Lease acts (upstream's
  // --leader-elect); timings as Kubernetes components' flags take them.
  bool leader_elect = false;
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  // The admission webhooks (0: none), their Service and the Secret their
  // certificate is kept in, in the operator's namespace.
  int webhook_server_port = 9443;
  std::string webhook_service_name = "trainyard-operator";
  std::string webhook_secret_name = "trainyard-operator-webhook-cert";
  // Where /metrics and the probes are served ("0": nowhere).
  std::string metrics_bind_address = ":8080";
  std::string health_probe_bind_address = ":8081";
  // Katib's Experiments, Trials and Suggestions too (--katib), with the
  // trials' observation log kept under state_dir (a volume), served and
  // taking pushes on the metrics address; trials push to katib_push_url
  // (empty: http://<webhook service>.<operator namespace>.svc:<metrics port>).
  bool katib = false;
  // Kubeflow Trainer v2's TrainJobs too (--trainer): each becomes the
  // JobSet its runtime makes, for the cluster's JobSet controller.
  bool trainer = false;
  // Where TrainJobs' trainers report their progress with --trainer
  // (KEP-2779; cli/operator_trainer_status.h): upstream's port, with the
  // webhooks' certificate; 0: not served (their pods are not given it).
  int trainer_status_port = 10443;
  std::string state_dir;
  std::string katib_push_url;
};

int RunOperator(const OperatorOptions& options);

}  // namespace trainyard::cli
