#include "tracking/metric_series.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "tune/metrics.h"

namespace trainyard::tracking {
namespace {

struct Point {
  int64_t step;
  double time_s;
  double value;
};

// Buckets of equal step ranges over [first, last]; each non-empty one
// becomes a point.
api::Json Downsampled(const std::string& name, const std::vector<Point>& points, size_t max) {
  api::Json steps = api::Json::array(), times = api::Json::array();
  api::Json lows = api::Json::array(), highs = api::Json::array(), lasts = api::Json::array();
  auto emit = [&](const Point& first, double low, double high, double last) {
    steps.push_back(first.step);
    times.push_back(first.time_s);
    lows.push_back(low);
    highs.push_back(high);
    lasts.push_back(last);
  };
  if (points.size() <= max) {
    for (const Point& p : points) emit(p, p.value, p.value, p.value);
  } else {
    // Steps need not be in order (MLflow takes any): bucket by step.
    std::vector<Point> sorted = points;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const Point& a, const Point& b) { return a.step < b.step; });
    // In double: steps may span all of int64, past what a difference holds.
    double first = static_cast<double>(sorted.front().step);
    double span = static_cast<double>(sorted.back().step) - first + 1;
    auto bucket_of = [&](const Point& p) {
      double at = (static_cast<double>(p.step) - first) / span * static_cast<double>(max);
      return static_cast<size_t>(std::clamp(at, 0.0, static_cast<double>(max - 1)));
    };
    size_t i = 0;
    while (i < sorted.size()) {
      size_t bucket = bucket_of(sorted[i]);
      const Point& start = sorted[i];
      double low = start.value, high = start.value, last = start.value;
      for (++i; i < sorted.size() && bucket_of(sorted[i]) == bucket; ++i) {
        low = std::min(low, sorted[i].value);
        high = std::max(high, sorted[i].value);
        last = sorted[i].value;
      }
      emit(start, low, high, last);
    }
  }
  return {{"name", name},
          {"count", points.size()},
          {"step", std::move(steps)},
          {"time", std::move(times)},
          {"min", std::move(lows)},
          {"max", std::move(highs)},
          {"value", std::move(lasts)}};
}

}  // namespace

api::Json MetricSeries(const std::vector<store::ObservationRow>& rows,
                       const SeriesOptions& options) {
  std::map<std::string, std::vector<Point>> by_metric;
  for (const store::ObservationRow& row : rows) {
    if (!options.metric.empty() && row.metric != options.metric) continue;
    int64_t step = row.StepOrIndex();
    if ((options.from_step && step < *options.from_step) ||
        (options.to_step && step > *options.to_step)) {
      continue;
    }
    std::optional<double> value = tune::ParseMetricValue(row.value);
    if (!value) continue;  // NaN, Infinity: nothing to draw
    by_metric[row.metric].push_back({step, static_cast<double>(row.time_us) / 1e6, *value});
  }
  api::Json series = api::Json::array();
  size_t max = std::max<size_t>(options.points, 1);
  for (const auto& [name, points] : by_metric) series.push_back(Downsampled(name, points, max));
  return {{"kind", "MetricSeries"}, {"series", std::move(series)}};
}

}  // namespace trainyard::tracking
