#include "tune/pareto.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace trainyard::tune {
namespace {

// NSGA-II's crowding distance of each member of one front (indices into
// `points`): the sum over objectives of the normalised gap between its two
// neighbours; the ends of each objective's range get infinity.
std::vector<double> Crowding(const std::vector<Losses>& points, const std::vector<size_t>& front) {
  std::vector<double> distance(front.size(), 0.0);
  if (front.empty()) return distance;
  size_t objectives = points[front[0]].size();
  std::vector<size_t> order(front.size());
  for (size_t m = 0; m < objectives; ++m) {
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return points[front[a]][m] < points[front[b]][m]; });
    double lo = points[front[order.front()]][m];
    double hi = points[front[order.back()]][m];
    distance[order.front()] = distance[order.back()] = std::numeric_limits<double>::infinity();
    if (hi <= lo) continue;
    for (size_t k = 1; k + 1 < order.size(); ++k) {
      distance[order[k]] +=
          (points[front[order[k + 1]]][m] - points[front[order[k - 1]]][m]) / (hi - lo);
    }
  }
  return distance;
}

// The hypervolume of `points` in their first `d` objectives.
double Volume(std::vector<Losses> points, const Losses& reference, size_t d) {
  if (points.empty()) return 0;
  if (d == 1) {
    double best = reference[0];
    for (const Losses& p : points) best = std::min(best, p[0]);
    return reference[0] - best;
  }
  // Slices along the last objective: between consecutive values, the
  // points at or below the slice dominate a (d-1)-volume.
  size_t last = d - 1;
  std::sort(points.begin(), points.end(),
            [&](const Losses& a, const Losses& b) { return a[last] < b[last]; });
  double total = 0;
  std::vector<Losses> below;
  for (size_t i = 0; i < points.size(); ++i) {
    below.push_back(points[i]);
    double next = i + 1 < points.size() ? points[i + 1][last] : reference[last];
    double height = next - points[i][last];
    if (height > 0) total += height * Volume(below, reference, d - 1);
  }
  return total;
}

}  // namespace

bool Dominates(const Losses& a, const Losses& b) {
  bool better = false;
  for (size_t m = 0; m < a.size(); ++m) {
    if (a[m] > b[m]) return false;
    better = better || a[m] < b[m];
  }
  return better;
}

std::vector<int> ParetoFronts(const std::vector<Losses>& points) {
  size_t n = points.size();
  std::vector<int> front(n, -1);
  std::vector<int> dominated_by(n, 0);  // how many points dominate each
  std::vector<std::vector<size_t>> dominates(n);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (Dominates(points[i], points[j])) {
        dominates[i].push_back(j);
        ++dominated_by[j];
      } else if (Dominates(points[j], points[i])) {
        dominates[j].push_back(i);
        ++dominated_by[i];
      }
    }
  }
  std::vector<size_t> current;
  for (size_t i = 0; i < n; ++i) {
    if (dominated_by[i] == 0) current.push_back(i);
  }
  for (int rank = 0; !current.empty(); ++rank) {
    std::vector<size_t> next;
    for (size_t i : current) {
      front[i] = rank;
      for (size_t j : dominates[i]) {
        if (--dominated_by[j] == 0) next.push_back(j);
      }
    }
    current = std::move(next);
  }
  return front;
}

std::vector<double> ParetoRankLosses(const std::vector<Losses>& points) {
  std::vector<int> fronts = ParetoFronts(points);
  int count = fronts.empty() ? 0 : *std::max_element(fronts.begin(), fronts.end()) + 1;
  std::vector<double> out(points.size(), 0.0);
  for (int f = 0; f < count; ++f) {
    std::vector<size_t> members;
    for (size_t i = 0; i < points.size(); ++i) {
      if (fronts[i] == f) members.push_back(i);
    }
    std::vector<double> crowding = Crowding(points, members);
    // Most crowded last; ties (the ends' infinities) in creation order.
    std::vector<size_t> order(members.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return crowding[a] > crowding[b]; });
    for (size_t k = 0; k < order.size(); ++k) {
      out[members[order[k]]] = f + static_cast<double>(k) / static_cast<double>(members.size());
    }
  }
  return out;
}

double Hypervolume(const std::vector<Losses>& points, const Losses& reference) {
  std::vector<Losses> inside;
  for (const Losses& p : points) {
    bool better = p.size() == reference.size();
    for (size_t m = 0; better && m < p.size(); ++m) better = p[m] < reference[m];
    if (better) inside.push_back(p);
  }
  // Only the front counts: dominated points add no volume.
  std::vector<int> fronts = ParetoFronts(inside);
  std::vector<Losses> front;
  for (size_t i = 0; i < inside.size(); ++i) {
    if (fronts[i] == 0) front.push_back(inside[i]);
  }
  return Volume(std::move(front), reference, reference.size());
}

}  // namespace trainyard::tune
