// The job controller for kubeflow.org/v1 jobs: level-triggered over the
// object store. Each Reconcile reads the job and its pods and moves the
// world one step closer to the spec; it is safe to run again at any time,
// and it tells its caller when it must run again even if nothing happens
// (activeDeadlineSeconds, ttlSecondsAfterFinished).
//
// Upstream's lifecycle (reference section 5), with its defects fixed:
//  - every restart counts against backoffLimit: in-place ones, ExitCode
//    re-creations, and the one pending (#2045, #2342);
//  - activeDeadlineSeconds fires from a timer, not only on other events
//    (#3358);
//  - when the job finishes, no replica keeps running, whatever the
//    cleanPodPolicy (#1982, #1579); the policy then decides which finished
//    pods (and their logs) are kept;
//  - cleanPodPolicy is honoured when the backoff limit is reached (#3419).
#pragma once

#include <optional>
#include <string>

#include "api/well_known.h"
#include "common/clock.h"
#include "controller/ports.h"
#include "controller/reconciler.h"
#include "store/object_store.h"

namespace trainyard::controller {

struct ReconcilerOptions {
  store::ObjectStore* store = nullptr;
  const Clock* clock = nullptr;
  PortAllocator* ports = nullptr;
  std::string host = "127.0.0.1";
  // What an MPIJob's rsh agent runs a command in a replica with; see
  // controller/mpi_config.h.
  std::string exec_command = "kubectl exec";
  // The trainyard binary a TrainJob's initializer steps run on one machine
  // (controller/trainjob_build.h); empty: none.
  std::string trainyard_program;
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
  };
  std::optional<Cluster> cluster;
};

class JobReconciler final : public Reconciler {
 public:
  explicit JobReconciler(ReconcilerOptions options) : options_(std::move(options)) {}

  // PyTorchJob, TFJob, XGBoostJob, MPIJob, PaddleJob, JAXJob.
  std::vector<std::string> Kinds() const override;
  Result<ReconcileResult> Reconcile(const store::ObjectKey& job_key) override;

 private:
  ReconcilerOptions options_;
};

}  // namespace trainyard::controller
