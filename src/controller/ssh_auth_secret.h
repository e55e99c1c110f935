// The SSH key Secret an MPI runtime's pods share on a cluster, as
// upstream's MPI plugin makes it: `<trainjob>-mpi-ssh-auth`, of type
// kubernetes.io/ssh-auth, immutable and owned by the TrainJob, holding a
// fresh ECDSA P-521 key: `ssh-privatekey` (PEM, "EC PRIVATE KEY") and
// `ssh-publickey` (an authorized_keys line). The runtime's pods mount it
// as id_rsa, id_rsa.pub and authorized_keys, so the launcher's mpirun
// reaches every node's sshd. On one machine no ssh is used, and none is
// made (mpirun goes through trainyard exec).
#pragma once

#include "api/json.h"
#include "common/status.h"
#include "controller/trainjob_build.h"

namespace trainyard::controller {

// The Secret's name for `job`.
std::string SshAuthSecretName(const TrainJobSource& job);

// A new Secret, with a key made now.
Result<api::Json> BuildSshAuthSecret(const TrainJobSource& job);

}  // namespace trainyard::controller
