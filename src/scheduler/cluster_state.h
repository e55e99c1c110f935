// The mutable side of one decision: per node, what is allocatable, used
// and reserved, as flat arrays over interned resources, and which device
// ids are taken. Built from the snapshot, changed only through Bind /
// Unbind (placing and undoing a pod) and Reserve.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "scheduler/snapshot.h"

namespace trainyard::scheduler {

inline constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

// A pod's hold on a node: the amounts and the device slots it took.
struct Hold {
  int node = -1;
  Demand demand;
  std::vector<std::pair<int, int>> devices;  // (pool, slot)
};

// Capacity set aside on a node for a gang that does not fit yet, so that
// later, smaller gangs cannot keep it waiting forever. A gang that ends
// before `until` may use it anyway (backfill).
struct NodeReservation {
  std::string gang;
  int64_t until = kNever;
  Demand demand;
};

struct DevicePool {
  int resource = -1;
  std::vector<std::string> ids;
  std::vector<char> taken;
};

struct NodeState {
  const Node* node = nullptr;
  std::vector<int64_t> allocatable;  // by resource id
  std::vector<int64_t> used;
  std::vector<int64_t> reserved;  // the sum of `reservations`
  std::vector<NodeReservation> reservations;
  std::vector<DevicePool> pools;
  int64_t free_devices = 0;
};

class ClusterState {
 public:
  // `table` must already hold every resource the decision will see.
  ClusterState(const std::vector<Node>& nodes, const ResourceTable& table);

  int size() const { return static_cast<int>(nodes_.size()); }
  const NodeState& at(int i) const { return nodes_[i]; }
  int Find(const std::string& name) const;  // -1 when unknown
  const ResourceTable& table() const { return *table_; }

  // Whether `demand` fits beside what is used, honouring every reservation
  // except those a gang ending at `ends` may backfill (ends <= until).
  // `ignore_used`: against allocatable alone (could it ever fit).
  bool Fits(int node, const Demand& demand, int64_t ends = kNever, bool ignore_used = false) const;
  // The first resource that does not fit, as Fits counts it; -1 if none.
  int Short(int node, const Demand& demand, int64_t ends = kNever) const;
  // The first resource short with every reservation ignored; -1 if none.
  int ShortUnreserved(int node, const Demand& demand) const;

  // Takes `demand` on `node`, lowest free device ids first.
  Hold Bind(int node, const Demand& demand);
  // Takes the named devices where they exist (a pod already bound); any
  // count left over takes the lowest free ids, so they are not handed out.
  Hold BindExisting(int node, const Demand& demand,
                    const std::map<std::string, std::vector<std::string>>& devices);
  void Unbind(const Hold& hold);
  void Reserve(int node, NodeReservation reservation);
  void PopReservation(int node);  // undoes the node's last Reserve

  // Smaller is better, ties go to the lower index. Bin-packing fills nodes
  // with the fewest free devices first, then the most used; spreading takes
  // the least used. Depends on the node alone, so a change to one node
  // changes only its own key.
  int64_t Key(int node, Policy policy) const;

  std::map<std::string, std::vector<std::string>> DeviceIds(const Hold& hold) const;

  // Changes with every Bind, Unbind and reservation: what was computed
  // from the state at one version holds while it stays the same.
  uint64_t version() const { return version_; }
  // For a caller that undid exactly what it did since `version`.
  void RestoreVersion(uint64_t version) { version_ = version; }

 private:
  int64_t Utilization(const NodeState& n) const;  // parts per million, the fullest resource
  void TakeSlot(NodeState& n, int pool, int slot, Hold& hold);

  const ResourceTable* table_;
  std::vector<NodeState> nodes_;
  std::map<std::string, int, std::less<>> index_;
  uint64_t version_ = 0;
};

}  // namespace trainyard::scheduler
