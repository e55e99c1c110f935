#include "tune/settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace trainyard::tune {

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

Result<SettingsReader> SettingsReader::Make(std::string_view algorithm, const Settings& settings,
                                            const std::vector<std::string>& known) {
  for (const auto& [name, value] : settings) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return InvalidArgumentError(
          fmt::format("unknown setting {} for algorithm {}", name, algorithm));
    }
  }
  SettingsReader reader;
  reader.algorithm_ = std::string(algorithm);
  reader.settings_ = settings;
  return reader;
}

std::optional<std::string> SettingsReader::Raw(std::string_view name) const {
  // The last of repeated names wins, as a dict built from the list would.
  std::optional<std::string> found;
  for (const auto& [key, value] : settings_) {
    if (key == name) found = value;
  }
  return found;
}

Result<int64_t> SettingsReader::Int(std::string_view name, int64_t fallback,
                                    int64_t min_value) const {
  std::optional<std::string> raw = Raw(name);
  if (!raw) return fallback;
  std::optional<int64_t> value = ParseInt(*raw);
  if (!value || *value < min_value) {
    return InvalidArgumentError(
        fmt::format("{} must be an integer >= {} for algorithm {}, not \"{}\"", name, min_value,
                    algorithm_, *raw));
  }
  return *value;
}

Result<double> SettingsReader::Double(std::string_view name, double fallback,
                                      double min_exclusive) const {
  std::optional<std::string> raw = Raw(name);
  if (!raw) return fallback;
  std::optional<double> value = ParseDouble(*raw);
  if (!value || *value <= min_exclusive) {
    return InvalidArgumentError(fmt::format("{} must be a number > {} for algorithm {}, not \"{}\"",
                                            name, min_exclusive, algorithm_, *raw));
  }
  return *value;
}

Result<std::string> SettingsReader::OneOf(std::string_view name, std::string fallback,
                                          const std::vector<std::string>& allowed) const {
  std::optional<std::string> raw = Raw(name);
  if (!raw) return fallback;
  if (std::find(allowed.begin(), allowed.end(), *raw) == allowed.end()) {
    return InvalidArgumentError(fmt::format("{} must be one of {} for algorithm {}, not \"{}\"",
                                            name, fmt::join(allowed, ", "), algorithm_, *raw));
  }
  return *raw;
}

Result<uint64_t> SettingsReader::Seed(uint64_t fallback) const {
  ASSIGN_OR_RETURN(int64_t seed, Int("random_state", -1, 0));
  return seed < 0 ? fallback : static_cast<uint64_t>(seed);
}

}  // namespace trainyard::tune
