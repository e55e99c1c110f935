#include "scheduler/placer.h"

#include <fmt/format.h>

#include "scheduler/node_match.h"

namespace trainyard::scheduler {
namespace {

// A text that is equal for equal shapes; cheap when the pod has no
// constraints, which is most pods.
std::string ShapeKey(const PodConstraints& c, const Demand& demand) {
  std::string key;
  for (const auto& [id, milli] : demand) key += fmt::format("{}={};", id, milli);
  if (c.node_selector.empty() && !c.required_affinity && c.tolerations.empty()) return key;
  for (const auto& [k, v] : c.node_selector) key += fmt::format("|s{}={}", k, v);
  if (c.required_affinity) {
    for (const api::NodeSelectorTerm& term : c.required_affinity->node_selector_terms) {
      key += "|t";
      for (const auto* list : {&term.match_expressions, &term.match_fields}) {
        key += "|e";
        for (const api::NodeSelectorRequirement& r : *list) {
          key += fmt::format("{}:{}:{};", r.key, r.operator_, fmt::join(r.values, ","));
        }
      }
    }
  }
  for (const api::Toleration& t : c.tolerations) {
    key += fmt::format("|o{}:{}:{}:{}", t.key, t.operator_, t.value, t.effect);
  }
  return key;
}

}  // namespace

int Placer::ShapeOf(const PodConstraints& constraints, const Demand& demand) {
  auto [it, inserted] = shape_ids_.emplace(ShapeKey(constraints, demand), shapes_.size());
  if (!inserted) return it->second;
  Shape shape{constraints,
              demand,
              std::vector<char>(state_.size(), 0),
              std::vector<char>(state_.size(), 0),
              {}};
  for (int i = 0; i < state_.size(); ++i) {
    shape.static_ok[i] = StaticMismatch(*state_.at(i).node, constraints).empty();
    if (shape.static_ok[i] && !linear_) {
      shape.in_set[i] = 1;
      shape.nodes.emplace(keys_[i], i);
    }
  }
  shapes_.push_back(std::move(shape));
  return it->second;
}

int Placer::BestIndexed(Shape& shape) {
  while (!shape.nodes.empty()) {
    auto first = shape.nodes.begin();
    int node = first->second;
    if (state_.Fits(node, shape.demand)) return node;
    shape.nodes.erase(first);  // until something on it is freed
    shape.in_set[node] = 0;
  }
  return -1;
}

int Placer::BestLinear(const Shape& shape, int64_t ends) const {
  int best = -1;
  for (int i = 0; i < state_.size(); ++i) {
    if (!shape.static_ok[i] || !state_.Fits(i, shape.demand, ends)) continue;
    if (best < 0 || keys_[i] < keys_[best]) best = i;
  }
  return best;
}

void Placer::Rekey(int node, bool freed) {
  int64_t old_key = keys_[node];
  int64_t new_key = state_.Key(node, policy_);
  keys_[node] = new_key;
  if (linear_) return;
  for (Shape& shape : shapes_) {
    if (shape.in_set[node]) {
      if (old_key == new_key) continue;
      shape.nodes.erase({old_key, node});
      shape.nodes.emplace(new_key, node);
    } else if (freed && shape.static_ok[node]) {
      shape.in_set[node] = 1;
      shape.nodes.emplace(new_key, node);
    }
  }
}

PlaceResult Placer::Place(const std::vector<const PodToPlace*>& pods, int64_t ends) {
  PlaceResult result;
  for (size_t i = 0; i < pods.size(); ++i) {
    Shape& shape = shapes_[pods[i]->shape];
    int node = linear_ || ends != kNever ? BestLinear(shape, ends) : BestIndexed(shape);
    if (node < 0) {
      UnbindAll(result.holds);
      result.holds.clear();
      result.failed = static_cast<int>(i);
      return result;
    }
    result.holds.push_back(state_.Bind(node, pods[i]->demand));
    Rekey(node, /*freed=*/false);
  }
  return result;
}

Hold Placer::BindExisting(int node, const Demand& demand,
                          const std::map<std::string, std::vector<std::string>>& devices) {
  Hold hold = state_.BindExisting(node, demand, devices);
  Rekey(node, /*freed=*/false);
  return hold;
}

void Placer::Unbind(const Hold& hold) {
  if (hold.node < 0) return;
  state_.Unbind(hold);
  Rekey(hold.node, /*freed=*/true);
}

void Placer::UnbindAll(const std::vector<Hold>& holds) {
  for (auto it = holds.rbegin(); it != holds.rend(); ++it) Unbind(*it);
}

}  // namespace trainyard::scheduler
