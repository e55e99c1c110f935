// Why a gang does not fit, in words a user can act on.
#include <fmt/format.h>

#include "scheduler/node_match.h"
#include "scheduler/schedule_run.h"

namespace trainyard::scheduler::internal {

// kube-scheduler's form, counts of nodes by the first reason each one
// fails: "0/5 nodes are available: 3 Insufficient nvidia.com/gpu, 2
// node(s) had untolerated taint {gpu: true}".
std::string Run::Breakdown(ClusterState& state, const Placer& placer, const PodToPlace& pod,
                           int shape, int64_t ends) const {
  std::map<std::string, int> counts;
  for (int n = 0; n < state.size(); ++n) {
    std::string why = StaticMismatch(*state.at(n).node, placer.Constraints(shape));
    if (why.empty()) {
      int short_of = state.Short(n, pod.demand, ends);
      if (short_of < 0) continue;
      if (state.ShortUnreserved(n, pod.demand) < 0) {
        why = "node(s) had capacity reserved for an earlier gang";
      } else if (short_of == pods_resource_) {
        why = "Too many pods";
      } else {
        why = "Insufficient " + table_.Name(short_of);
      }
    }
    ++counts[why];
  }
  std::vector<std::string> parts;
  for (const auto& [why, count] : counts) parts.push_back(fmt::format("{} {}", count, why));
  return fmt::format("0/{} nodes are available: {}", state.size(), fmt::join(parts, ", "));
}

std::string Run::Unplaceable(const std::vector<const PodToPlace*>& pods, int failed, int64_t ends) {
  // Gangs of the same shapes fail the same way until the nodes change:
  // one count per node is enough for all of them.
  std::string key = fmt::format("{}|", ends);
  for (int i = 0; i <= failed; ++i) key += fmt::format("{},", pods[i]->shape);
  uint64_t version = state_->version();
  auto [cached, fresh] = breakdowns_.try_emplace(key);
  if (fresh || cached->second.first != version) {
    std::vector<const PodToPlace*> before(pods.begin(), pods.begin() + failed);
    PlaceResult placed = placer_->Place(before, ends);
    cached->second = {version,
                      Breakdown(*state_, *placer_, *pods[failed], pods[failed]->shape, ends)};
    placer_->UnbindAll(placed.holds);
    state_->RestoreVersion(version);  // the trial placement is undone
  }
  const std::string& breakdown = cached->second.second;
  if (pods.size() == 1) return breakdown;
  return fmt::format("{} of the {} pods the gang needs at once fit; pod {} does not: {}", failed,
                     pods.size(), pods[failed]->pod->name, breakdown);
}

std::optional<std::string> Run::NeverFits(const std::vector<const PodToPlace*>& pods) {
  if (!empty_state_) {
    empty_state_ = std::make_unique<ClusterState>(snapshot_.nodes, table_);
    empty_placer_ = std::make_unique<Placer>(*empty_state_, options_.policy, /*linear=*/true);
  }
  std::vector<PodToPlace> mapped;
  std::string key;
  for (const PodToPlace* pod : pods) {
    mapped.push_back(*pod);
    mapped.back().shape = empty_placer_->ShapeOf(pod->pod->constraints, pod->demand);
    key += fmt::format("{},", mapped.back().shape);
  }
  auto cached = never_fits_.find(key);
  if (cached != never_fits_.end()) return cached->second;
  std::vector<const PodToPlace*> pointers;
  for (const PodToPlace& pod : mapped) pointers.push_back(&pod);
  PlaceResult placed = empty_placer_->Place(pointers);
  std::optional<std::string> why;
  if (placed.failed < 0) {
    empty_placer_->UnbindAll(placed.holds);
  } else {
    int failed = placed.failed;
    std::vector<const PodToPlace*> before(pointers.begin(), pointers.begin() + failed);
    PlaceResult prefix = empty_placer_->Place(before);
    std::string breakdown =
        Breakdown(*empty_state_, *empty_placer_, mapped[failed], mapped[failed].shape, kNever);
    empty_placer_->UnbindAll(prefix.holds);
    why = failed == 0 ? fmt::format("pod {} fits no node even with nothing else running: {}",
                                    mapped[failed].pod->name, breakdown)
                      : fmt::format(
                            "the gang's {} pods do not fit together even with nothing "
                            "else running; pod {}: {}",
                            pods.size(), mapped[failed].pod->name, breakdown);
  }
  never_fits_.emplace(key, why);
  return why;
}

}  // namespace trainyard::scheduler::internal
