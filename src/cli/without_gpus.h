// `trainyard run --without-gpus`: a cluster manifest tried on a machine
// without GPUs. Every container's GPU requests and limits (any resource
// named for GPUs: nvidia.com/gpu, amd.com/gpu, gpu.intel.com/...) are
// dropped, and CUDA_VISIBLE_DEVICES is set empty, so that frameworks see
// no GPU and run on the CPU, as they would on a node that has none.
#pragma once

#include <cstdint>

#include "api/json.h"

namespace trainyard::cli {

// Rewrites every pod spec in `document` (a job's replicas, an
// experiment's trial template); how many GPUs were dropped.
int64_t DropGpus(api::Json& document);

}  // namespace trainyard::cli
