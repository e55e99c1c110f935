// What the tune tests build their spaces from.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tune/samplers.h"
#include "tune/space.h"

namespace trainyard::tune {

inline Parameter Double(std::string name, double min, double max,
                        Distribution distribution = Distribution::kUniform) {
  return {.name = std::move(name),
          .type = ParameterType::kDouble,
          .distribution = distribution,
          .min = min,
          .max = max};
}

// The space, failing the test when the parameters do not make one.
inline Space MakeSpace(std::vector<Parameter> parameters) {
  Result<Space> space = Space::Make(std::move(parameters));
  EXPECT_TRUE(space.ok()) << space.status().ToString();
  return std::move(*space);
}

using Objective = std::function<double(const Point&)>;

// The finished trial of a suggestion, the `index`th trial.
using Finish = std::function<TrialRecord(const Suggestion& s, size_t index)>;

// Asks `batch` points at a time and finishes them at once, until `budget`
// trials exist.
inline std::vector<TrialRecord> DriveWith(Sampler& sampler, int budget, int batch,
                                          const Finish& finish) {
  std::vector<TrialRecord> trials;
  while (static_cast<int>(trials.size()) < budget) {
    Result<SuggestResult> result = sampler.Suggest(trials, batch);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok() || result->suggestions.empty()) break;
    for (const Suggestion& s : result->suggestions) trials.push_back(finish(s, trials.size()));
  }
  return trials;
}

// As DriveWith, each trial succeeding with the loss `f` gives it.
inline std::vector<TrialRecord> Drive(Sampler& sampler, const Objective& f, int budget,
                                      int batch = 1) {
  return DriveWith(sampler, budget, batch, [&](const Suggestion& s, size_t) {
    return TrialRecord{
        .point = s.point, .labels = s.labels, .state = TrialState::kSucceeded, .loss = f(s.point)};
  });
}

inline double Best(const std::vector<TrialRecord>& trials) {
  double best = INFINITY;
  for (const TrialRecord& t : trials) best = std::min(best, *t.loss);
  return best;
}

// A suggestion's label, empty when it has none.
inline std::string Label(const Suggestion& s, std::string_view key) {
  auto it = s.labels.find(std::string(key));
  return it == s.labels.end() ? "" : it->second;
}

}  // namespace trainyard::tune
