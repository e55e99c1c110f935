#include "scheduler/cluster_state.h"

#include <algorithm>

#include "common/int128.h"

namespace trainyard::scheduler {
namespace {

// Without a `pods` entry a node takes any number of pods.
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

int64_t Whole(int64_t milli) { return (milli + 999) / 1000; }

}  // namespace

ClusterState::ClusterState(const std::vector<Node>& nodes, const ResourceTable& table)
    : table_(&table) {
  const int resources = table.size();
  const int pods = table.Find(std::string(kPodsResource));
  nodes_.reserve(nodes.size());
  for (const Node& node : nodes) {
    NodeState n;
    n.node = &node;
    n.allocatable.assign(resources, 0);
    n.used.assign(resources, 0);
    n.reserved.assign(resources, 0);
    if (pods >= 0) n.allocatable[pods] = kUnlimited;
    for (const auto& [name, milli] : node.allocatable) {
      int id = table.Find(name);
      if (id >= 0) n.allocatable[id] = milli;
    }
    for (const auto& [name, ids] : node.devices) {
      int id = table.Find(name);
      if (id < 0) continue;
      n.pools.push_back({id, ids, std::vector<char>(ids.size(), 0)});
      n.free_devices += static_cast<int64_t>(ids.size());
    }
    index_.emplace(node.name, static_cast<int>(nodes_.size()));
    nodes_.push_back(std::move(n));
  }
}

int ClusterState::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int ClusterState::Short(int node, const Demand& demand, int64_t ends) const {
  const NodeState& n = nodes_[node];
  for (const auto& [id, milli] : demand) {
    int64_t reserved = n.reserved[id];
    if (ends != kNever && reserved != 0) {
      for (const NodeReservation& r : n.reservations) {
        if (ends > r.until) continue;
        for (const auto& [rid, rmilli] : r.demand) {
          if (rid == id) reserved -= rmilli;
        }
      }
    }
    if (n.used[id] + reserved + milli > n.allocatable[id]) return id;
  }
  return -1;
}

int ClusterState::ShortUnreserved(int node, const Demand& demand) const {
  const NodeState& n = nodes_[node];
  for (const auto& [id, milli] : demand) {
    if (n.used[id] + milli > n.allocatable[id]) return id;
  }
  return -1;
}

bool ClusterState::Fits(int node, const Demand& demand, int64_t ends, bool ignore_used) const {
  if (!ignore_used) return Short(node, demand, ends) < 0;
  const NodeState& n = nodes_[node];
  for (const auto& [id, milli] : demand) {
    if (n.reserved[id] + milli > n.allocatable[id]) return false;
  }
  return true;
}

void ClusterState::TakeSlot(NodeState& n, int pool, int slot, Hold& hold) {
  n.pools[pool].taken[slot] = 1;
  --n.free_devices;
  hold.devices.emplace_back(pool, slot);
}

Hold ClusterState::BindExisting(int node, const Demand& demand,
                                const std::map<std::string, std::vector<std::string>>& devices) {
  NodeState& n = nodes_[node];
  ++version_;
  Hold hold{node, demand, {}};
  for (const auto& [id, milli] : demand) n.used[id] += milli;
  for (size_t p = 0; p < n.pools.size(); ++p) {
    DevicePool& pool = n.pools[p];
    int64_t want = 0;
    for (const auto& [id, milli] : demand) {
      if (id == pool.resource) want = Whole(milli);
    }
    auto named = devices.find(table_->Name(pool.resource));
    if (named != devices.end()) {
      for (const std::string& device : named->second) {
        auto it = std::find(pool.ids.begin(), pool.ids.end(), device);
        size_t slot = it - pool.ids.begin();
        if (it == pool.ids.end() || pool.taken[slot] || want == 0) continue;
        TakeSlot(n, static_cast<int>(p), static_cast<int>(slot), hold);
        --want;
      }
    }
    for (size_t slot = 0; slot < pool.ids.size() && want > 0; ++slot) {
      if (pool.taken[slot]) continue;
      TakeSlot(n, static_cast<int>(p), static_cast<int>(slot), hold);
      --want;
    }
  }
  return hold;
}

Hold ClusterState::Bind(int node, const Demand& demand) { return BindExisting(node, demand, {}); }

void ClusterState::Unbind(const Hold& hold) {
  NodeState& n = nodes_[hold.node];
  ++version_;
  for (const auto& [id, milli] : hold.demand) n.used[id] -= milli;
  for (const auto& [pool, slot] : hold.devices) {
    n.pools[pool].taken[slot] = 0;
    ++n.free_devices;
  }
}

void ClusterState::Reserve(int node, NodeReservation reservation) {
  NodeState& n = nodes_[node];
  ++version_;
  for (const auto& [id, milli] : reservation.demand) n.reserved[id] += milli;
  n.reservations.push_back(std::move(reservation));
}

void ClusterState::PopReservation(int node) {
  NodeState& n = nodes_[node];
  ++version_;
  for (const auto& [id, milli] : n.reservations.back().demand) n.reserved[id] -= milli;
  n.reservations.pop_back();
}

int64_t ClusterState::Utilization(const NodeState& n) const {
  int64_t worst = 0;
  for (size_t id = 0; id < n.allocatable.size(); ++id) {
    if (n.allocatable[id] <= 0 || n.allocatable[id] >= kUnlimited) continue;
    Int128 ppm = static_cast<Int128>(n.used[id]) * 1'000'000 / n.allocatable[id];
    worst = std::max(worst, static_cast<int64_t>(ppm));
  }
  return worst;
}

int64_t ClusterState::Key(int node, Policy policy) const {
  const NodeState& n = nodes_[node];
  int64_t utilization = Utilization(n);  // 0 ... 1e6, below 2^20
  if (policy == Policy::kSpread) return utilization;
  return (n.free_devices << 21) + (1'000'000 - std::min<int64_t>(utilization, 1'000'000));
}

std::map<std::string, std::vector<std::string>> ClusterState::DeviceIds(const Hold& hold) const {
  std::map<std::string, std::vector<std::string>> out;
  const NodeState& n = nodes_[hold.node];
  for (const auto& [pool, slot] : hold.devices) {
    out[table_->Name(n.pools[pool].resource)].push_back(n.pools[pool].ids[slot]);
  }
  return out;
}

}  // namespace trainyard::scheduler
