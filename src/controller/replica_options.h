// How the replicas a job controller makes are reached: on this machine
// (allocated ports on one host, an exec command for MPI's rsh agent) or on
// Kubernetes (a headless Service per replica, upstream's init containers).
// The kubeflow.org/v1 job controller and the TrainJob controller both make
// replicas; the batch Job and JobSet controllers make only objects.
#pragma once

#include <optional>
#include <string>

#include "controller/ports.h"

namespace trainyard::controller {

struct ReplicaOptions {
  PortAllocator* ports = nullptr;
  std::string host = "127.0.0.1";
  // What an MPIJob's rsh agent runs a command in a replica with; see
  // controller/mpi_config.h.
  std::string exec_command = "kubectl exec";
  // On Kubernetes (`trainyard operator`): each replica is reached through
  // a headless Service the controller makes, at its template's port, as
  // upstream does; set, no port is allocated and `host` is unused.
  struct Cluster {
    std::string domain;  // upstream's CUSTOM_CLUSTER_DOMAIN
    // A PyTorchJob's workers wait for the master's DNS name in upstream's
    // `init-pytorch` init container (--pytorch-init-container-image,
    // --pytorch-init-container-max-tries).
    std::string pytorch_init_image = "alpine:3.10";
    int pytorch_init_max_tries = 100;
    // Each job's pods are scheduled as a gang by this scheduler through a
    // PodGroup (controller/pod_groups.h): Volcano's for "volcano",
    // scheduler-plugins' for any other name; empty: pods go to the
    // default scheduler.
    std::string gang_scheduler;
    // An MPIJob launcher's kubectl-delivery init container
    // (--mpi-kubectl-delivery-image).
    std::string mpi_kubectl_delivery_image = "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest";
    // Where TrainJobs' trainers report their progress (KEP-2779): the
    // operator's status server and its CA; empty: not served
    // (controller/trainjob_status_endpoint.h).
    std::string trainer_status_url;
    std::string trainer_status_ca;
  };
  std::optional<Cluster> cluster;
};

}  // namespace trainyard::controller
