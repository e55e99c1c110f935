// An MPIJob's launcher on a cluster, set up as upstream's v1 controller
// sets it up: mpirun reaches each worker through `/opt/kube/kubectl exec`
// (kubexec.sh), so the launcher gets
//  - upstream's `kubectl-delivery` init container, which puts kubectl in
//    an emptyDir mounted at /opt/kube (--mpi-kubectl-delivery-image);
//  - a ServiceAccount, Role and RoleBinding `<job>-launcher` (the account
//    unless its template names one): it may get, list and watch pods, and
//    exec into this job's workers and nothing else.
#pragma once

#include <string>

#include "api/pod.h"
#include "api/training_job.h"
#include "store/object_store.h"

namespace trainyard::controller {

inline constexpr std::string_view kKubectlDir = "/opt/kube";

// Creates the account, role and binding, or brings the role's worker names
// in step with the job's workers.
Status ReconcileLauncherAccess(store::ObjectStore& store, const api::TrainingJob& job);

// The launcher pod's init container, volume, mount and service account.
void PrepareLauncherPod(const api::TrainingJob& job, const std::string& delivery_image,
                        api::PodSpec& spec);

}  // namespace trainyard::controller
