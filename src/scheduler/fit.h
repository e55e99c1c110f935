// Whether a gang of pods fits on a machine, all or nothing, and which GPUs
// each pod gets. Pure: the caller passes the machine and what is in use.
//
// A pod's demand is what Kubernetes' scheduler counts: per resource, the
// sum over its containers of the request (the limit where no request is
// set), or the largest init container's, whichever is larger. Quantities
// are milli-units ("500m" cpu is 500, "1Gi" memory is 1073741824000).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/pod.h"
#include "scheduler/resources.h"

namespace trainyard::scheduler {

struct Machine {
  Amounts capacity;               // cpu, memory, nvidia.com/gpu, ...
  std::vector<std::string> gpus;  // device indices, in nvidia-smi's order
};

// What bound, unfinished pods hold.
struct InUse {
  Amounts amounts;
  std::set<std::string> gpus;
};

struct PodDemand {
  std::string name;
  Amounts amounts;
};

struct GangFit {
  bool fits = false;
  bool ever_fits = true;  // false: more than the whole machine
  std::string reason;     // why not, naming the resource: empty when it fits
  std::map<std::string, std::vector<std::string>> gpus;  // pod -> device indices
};

Amounts PodDemandOf(const api::PodSpec& spec);

GangFit FitGang(const Machine& machine, const InUse& in_use, const std::vector<PodDemand>& gang);

}  // namespace trainyard::scheduler
