// Reading algorithm settings: name/value strings with defaults and bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "tune/sampler.h"

namespace trainyard::tune {

// A setting's or a label's whole text as a number: nullopt for anything
// else ("1x", "", "nan", "inf").
std::optional<int64_t> ParseInt(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

// Looks settings up by name; every setting must be one of `known`, else
// InvalidArgument "unknown setting <name> for algorithm <algorithm>".
class SettingsReader {
 public:
  static Result<SettingsReader> Make(std::string_view algorithm, const Settings& settings,
                                     const std::vector<std::string>& known);

  // The value of `name` parsed, or `fallback` when absent. Errors say the
  // setting and the rule: "n_ei_candidates must be an integer >= 1, not \"x\"".
  Result<int64_t> Int(std::string_view name, int64_t fallback, int64_t min_value) const;
  Result<double> Double(std::string_view name, double fallback, double min_exclusive) const;
  Result<std::string> OneOf(std::string_view name, std::string fallback,
                            const std::vector<std::string>& allowed) const;
  std::optional<std::string> Raw(std::string_view name) const;

  // random_state when set, else `fallback`.
  Result<uint64_t> Seed(uint64_t fallback) const;

 private:
  std::string algorithm_;
  Settings settings_;
};

}  // namespace trainyard::tune
