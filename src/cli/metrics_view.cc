#include "cli/metrics_view.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "store/observation_log.h"
#include "tune/metrics.h"

namespace trainyard::cli {
namespace {

struct Point {
  std::string time;
  std::string text;
  double value = 0;
  int64_t step = 0;  // as logged, else its place among its metric's values (from 0)
};

// Each metric's numeric values, in order of collection.
std::map<std::string, std::vector<Point>> Series(const api::Json& log) {
  std::map<std::string, std::vector<Point>> out;
  for (const api::Json& entry : api::ArrayRefAt(log, {"metricLogs"})) {
    std::string name = api::StringAt(entry, {"metric", "name"});
    std::string text = api::StringAt(entry, {"metric", "value"});
    std::optional<double> value = tune::ParseMetricValue(text);
    if (name.empty() || !value) continue;
    std::vector<Point>& points = out[name];
    int64_t step = entry.contains("step") && entry["step"].is_number_integer()
                       ? entry["step"].get<int64_t>()
                   : entry.contains("index") && entry["index"].is_number_integer()
                       ? entry["index"].get<int64_t>()
                       : static_cast<int64_t>(points.size());
    points.push_back({api::StringAt(entry, "timeStamp"), text, *value, step});
  }
  return out;
}

}  // namespace

bool HasMetric(const api::Json& log, const std::string& metric) {
  return Series(log).contains(metric);
}

std::string Sparkline(const std::vector<double>& values, size_t width) {
  static constexpr std::array<const char*, 8> kBars = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  size_t buckets = std::min(width, values.size());
  std::vector<double> means(buckets, 0);
  for (size_t b = 0; b < buckets; ++b) {
    size_t begin = b * values.size() / buckets, end = (b + 1) * values.size() / buckets;
    for (size_t i = begin; i < end; ++i) means[b] += values[i];
    means[b] /= static_cast<double>(end - begin);
  }
  auto [low, high] = std::minmax_element(means.begin(), means.end());
  std::string out;
  for (double m : means) {
    double share = *high > *low ? (m - *low) / (*high - *low) : 0.5;
    if (!std::isfinite(share)) share = 0.5;  // a range past double's
    out += kBars[std::min<size_t>(7, static_cast<size_t>(share * 8))];
  }
  return out;
}

std::string MetricsView(const api::Json& log, const std::string& metric) {
  std::map<std::string, std::vector<Point>> series = Series(log);
  if (series.empty()) return "No metrics collected yet.\n";
  if (!metric.empty()) {
    auto it = series.find(metric);
    if (it == series.end()) {
      std::vector<std::string> names;
      for (const auto& [name, points] : series) names.push_back(name);
      return fmt::format("No metric {}; there are: {}\n", metric, fmt::join(names, ", "));
    }
    std::string out = fmt::format("{:>6}  {:<14}  {}\n", "STEP", "VALUE", "TIME");
    for (const Point& p : it->second) {
      out += fmt::format("{:>6}  {:<14}  {}\n", p.step, p.text, p.time);
    }
    return out;
  }
  std::string out = fmt::format("{:<20} {:>6}  {:<12} {:<12} {:<12} {}\n", "METRIC", "STEPS",
                                "LAST", "MIN", "MAX", "TREND");
  std::map<std::string, const api::Json*> thinned;
  for (const api::Json& t : api::ArrayRefAt(log, {"thinned"})) {
    thinned[api::StringAt(t, "name")] = &t;
  }
  std::string notes;
  for (const auto& [name, points] : series) {
    std::vector<double> values;
    for (const Point& p : points) values.push_back(p.value);
    // Each as it was reported, as LAST is: 0.96666664 stays so.
    auto [low, high] =
        std::minmax_element(points.begin(), points.end(),
                            [](const Point& a, const Point& b) { return a.value < b.value; });
    std::string count = std::to_string(points.size()), min = low->text, max = high->text;
    if (auto t = thinned.find(name); t != thinned.end()) {
      // Of a thinned metric, every value counts, and its extremes are exact.
      const api::Json& note = *t->second;
      count = std::to_string(note.value("values", int64_t{0}));
      min = api::StringAt(note, "min");
      max = api::StringAt(note, "max");
      notes += fmt::format("{}: {} values, {} kept; STEPS, MIN, MAX and LAST count them all\n",
                           name, count, api::StringAt(note, "kept"));
    }
    out += fmt::format("{:<20} {:>6}  {:<12} {:<12} {:<12} {}\n", name, count, points.back().text,
                       min, max, Sparkline(values, 32));
  }
  if (int64_t dropped = log.value("droppedValues", int64_t{0}); dropped > 0) {
    notes += fmt::format("{} values of metrics past the {} a job keeps were dropped\n", dropped,
                         store::kMetricsPerLog);
  }
  return out + notes;
}

}  // namespace trainyard::cli
