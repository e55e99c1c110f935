// Reading metrics from a trial's output, as Katib's collectors do.
//
// TEXT lines: a line is considered only when it contains one of the metric
// names; its timestamp is the first space-separated token when that parses as
// RFC 3339 (with or without fractional seconds), else none; every match of
// every filter regex (RE2, Go's syntax, as upstream) gives group 1 as the
// name and group 2 as the value, both trimmed, kept only when the name is one
// of the metric names. Values are kept as text, as Katib's database does;
// callers read numbers with ParseMetricValue.
//
// JSON lines: one object per line; each metric name's value may be a JSON
// string (Katib) or a number (Katib ignores numbers, its defect); optional
// "timestamp" as an RFC 3339 string or epoch seconds.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace trainyard::tune {

// Katib's default filter: name=value, with signs, fractions and exponents.
inline constexpr std::string_view kDefaultMetricFilter =
    R"(([\w|-]+)\s*=\s*([+-]?\d*(\.\d+)?([Ee][+-]?\d+)?))";

struct MetricSample {
  std::string name;
  std::string value;
  // Microseconds since the epoch from the line's own timestamp; nullopt when
  // the line had none (the caller stamps it with the time it read the line).
  std::optional<int64_t> timestamp_us;
  bool operator==(const MetricSample&) const = default;
};

enum class MetricsFormat { kText, kJson };

class MetricsParser {
 public:
  // `metric_names` empty means any name whose value is a number (a
  // job's own metrics; text format only). `filters` empty means the
  // default filter. A filter that does not compile
  // or has fewer than two top-level groups is InvalidArgument, with Katib's
  // messages ("invalid filter: ...", "two top subexpressions are required").
  static Result<MetricsParser> Make(std::vector<std::string> metric_names,
                                    std::vector<std::string> filters, MetricsFormat format);

  // The samples on one line (without its newline), in order of appearance.
  std::vector<MetricSample> ParseLine(std::string_view line) const;

  ~MetricsParser();
  MetricsParser(MetricsParser&&) noexcept;
  MetricsParser& operator=(MetricsParser&&) noexcept;

 private:
  struct Impl;
  explicit MetricsParser(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// RFC 3339 as Go's time.RFC3339Nano parses it ("2006-01-02T15:04:05Z",
// an optional fraction of up to nine digits, "Z" or a ±hh:mm offset), as
// microseconds since the epoch; nullopt for anything else.
std::optional<int64_t> ParseRfc3339Micros(std::string_view text);
// The same in nanoseconds since the epoch (the kubelet stamps log lines
// with nanoseconds).
std::optional<int64_t> ParseRfc3339Nanos(std::string_view text);

// Checks one metricsFormat regex as Katib's webhook does (compiles, two
// top-level groups); the message is Katib's.
Status ValidateMetricFilter(std::string_view filter);

// A metric value as a number: finite decimal text ("0.98", ".98", "1E0",
// "-7.53e-05"); nullopt for "unavailable" and anything else.
std::optional<double> ParseMetricValue(std::string_view value);

// Katib's observation of one metric over all its samples.
enum class MetricStrategy { kMin, kMax, kLatest };

struct MetricSummary {
  std::string name;
  std::string min = "unavailable";  // over numeric values
  std::string max = "unavailable";
  std::string latest = "unavailable";  // greatest timestamp; ties: later sample
  bool operator==(const MetricSummary&) const = default;
};

// Samples in the order they were recorded, each with the timestamp it was
// recorded under (the line's own or the read time).
struct TimedSample {
  std::string name;
  std::string value;
  int64_t timestamp_us = 0;
};

MetricSummary Summarize(std::string_view name, const std::vector<TimedSample>& samples);

// The value a strategy picks, falling back to latest when min/max is
// unavailable (upstream's rule); nullopt when not a number.
std::optional<double> ObjectiveValue(const MetricSummary& summary, MetricStrategy strategy);

}  // namespace trainyard::tune
