// The node filters that depend only on the node and the pod, not on what
// runs where: cordons, nodeSelector, required node affinity (In, NotIn,
// Exists, DoesNotExist, Gt, Lt; matchFields on metadata.name) and taints
// against tolerations (NoSchedule and NoExecute must be tolerated;
// PreferNoSchedule never blocks).
#pragma once

#include <string>

#include "scheduler/snapshot.h"

namespace trainyard::scheduler {

// Empty when the pod may go to the node; otherwise why not, in the words
// kube-scheduler uses ("node(s) didn't match Pod's node affinity/selector"),
// so that counts of equal reasons can be summed across nodes.
std::string StaticMismatch(const Node& node, const PodConstraints& pod);

bool Tolerates(const std::vector<api::Toleration>& tolerations, const Taint& taint);

}  // namespace trainyard::scheduler
