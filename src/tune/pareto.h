// Several objectives at once: Pareto fronts, a scalar order over them that
// single-objective samplers can search with, and the hypervolume that
// measures a front.
//
// Every objective is a loss (a maximised metric is negated by the caller),
// as for samplers (tune/sampler.h).
#pragma once

#include <vector>

namespace trainyard::tune {

using Losses = std::vector<double>;  // one per objective

// Whether `a` dominates `b`: no worse in every objective, better in one.
bool Dominates(const Losses& a, const Losses& b);

// Non-dominated sorting (NSGA-II's): each point's front, 0 for the points
// no other dominates, 1 for those only front 0 dominates, and so on.
std::vector<int> ParetoFronts(const std::vector<Losses>& points);

// A total order over the points as one loss each, for samplers that know
// one objective: the front first, then, within a front, the crowding
// distance (NSGA-II's: the points alone in their stretch of the front come
// first, so a sampler that aims at the best ranks spreads along the front
// instead of crowding one end). Values lie in [front, front + 1).
std::vector<double> ParetoRankLosses(const std::vector<Losses>& points);

// The volume the points dominate, bounded by `reference` (a point worse
// than all in every objective; points not better than it in every
// objective add nothing). Exact (slicing, as Fonseca's HSO): O(n^(d-1) log
// n) for d objectives, meant for fronts of at most a few hundred points
// and d <= 4.
double Hypervolume(const std::vector<Losses>& points, const Losses& reference);

}  // namespace trainyard::tune
