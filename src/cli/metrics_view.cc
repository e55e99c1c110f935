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
    // Columns as wide as their widest value: a long one never shifts the rest.
    size_t step_width = 6, value_width = 14;
    for (const Point& p : it->second) {
      step_width = std::max(step_width, std::to_string(p.step).size());
      value_width = std::max(value_width, p.text.size());
    }
    std::string out =
        fmt::format("{:>{}}  {:<{}}  {}\n", "STEP", step_width, "VALUE", value_width, "TIME");
    for (const Point& p : it->second) {
      out += fmt::format("{:>{}}  {:<{}}  {}\n", p.step, step_width, p.text, value_width, p.time);
    }
    return out;
  }
  struct Row {
    std::string name, count, last, min, max, trend;
  };
  std::vector<Row> rows;
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
      count = std::to_string(api::IntAt(note, "values"));
      min = api::StringAt(note, "min");
      max = api::StringAt(note, "max");
      notes += fmt::format("{}: {} values, {} kept; STEPS, MIN, MAX and LAST count them all\n",
                           name, count, api::StringAt(note, "kept"));
    }
    rows.push_back({name, count, points.back().text, min, max, Sparkline(values, 32)});
  }
  Row widths{.name = "METRIC", .count = "STEPS", .last = "LAST", .min = "MIN", .max = "MAX"};
  size_t w[5] = {20, 6, 12, 12, 12};
  for (const Row& r : rows) {
    const std::string* cells[5] = {&r.name, &r.count, &r.last, &r.min, &r.max};
    for (int i = 0; i < 5; ++i) w[i] = std::max(w[i], cells[i]->size());
  }
  std::string out =
      fmt::format("{:<{}} {:>{}}  {:<{}} {:<{}} {:<{}} {}\n", widths.name, w[0], widths.count, w[1],
                  widths.last, w[2], widths.min, w[3], widths.max, w[4], "TREND");
  for (const Row& r : rows) {
    out += fmt::format("{:<{}} {:>{}}  {:<{}} {:<{}} {:<{}} {}\n", r.name, w[0], r.count, w[1],
                       r.last, w[2], r.min, w[3], r.max, w[4], r.trend);
  }
  if (int64_t dropped = api::IntAt(log, "droppedValues"); dropped > 0) {
    notes += fmt::format("{} values of metrics past the {} a job keeps were dropped\n", dropped,
                         store::kMetricsPerLog);
  }
  return out + notes;
}

}  // namespace trainyard::cli
