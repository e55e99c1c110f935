// Places a gang's pods on nodes, all or none, by the policy's node order.
//
// Finding the best node for a pod must not cost a scan of every node: pods
// with the same constraints and requests share a "shape", and each shape
// keeps the nodes that may still take it in an ordered set by (key, index).
// A node that no longer fits a shape leaves that shape's set, and comes
// back only when something on it is freed; during a decision capacity is
// otherwise only taken, so the best node is found in O(log n) amortized.
// `linear` picks the same nodes by scanning every one: the reference the
// property tests hold the indexed search to, and the path a gang that may
// backfill through reservations takes.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster_state.h"

namespace trainyard::scheduler {

struct PodToPlace {
  const PendingPod* pod = nullptr;
  Demand demand;  // requests, plus one of the node's `pods`
  int shape = -1;
};

struct PlaceResult {
  std::vector<Hold> holds;  // one per placed pod, in the order given
  int failed = -1;          // index of the first pod that found no node; -1: all placed
};

class Placer {
 public:
  Placer(ClusterState& state, Policy policy, bool linear = false)
      : state_(state), policy_(policy), linear_(linear), keys_(state.size()) {
    for (int i = 0; i < state.size(); ++i) keys_[i] = state.Key(i, policy);
  }

  int ShapeOf(const PodConstraints& constraints, const Demand& demand);
  bool StaticOk(int shape, int node) const { return shapes_[shape].static_ok[node] != 0; }
  const PodConstraints& Constraints(int shape) const { return shapes_[shape].constraints; }

  // Binds every pod or none. `ends`: when the gang would end at the latest,
  // for backfill past reservations; kNever honours them all.
  PlaceResult Place(const std::vector<const PodToPlace*>& pods, int64_t ends = kNever);

  Hold BindExisting(int node, const Demand& demand,
                    const std::map<std::string, std::vector<std::string>>& devices);
  void Unbind(const Hold& hold);
  void UnbindAll(const std::vector<Hold>& holds);

  ClusterState& state() { return state_; }

 private:
  struct Shape {
    PodConstraints constraints;
    Demand demand;
    std::vector<char> static_ok;
    std::vector<char> in_set;
    std::set<std::pair<int64_t, int>> nodes;
  };

  int BestIndexed(Shape& shape);
  int BestLinear(const Shape& shape, int64_t ends) const;
  void Rekey(int node, bool freed);

  ClusterState& state_;
  Policy policy_;
  bool linear_;
  std::vector<int64_t> keys_;
  std::vector<Shape> shapes_;
  std::map<std::string, int> shape_ids_;
};

}  // namespace trainyard::scheduler
