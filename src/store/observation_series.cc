#include "store/observation_series.h"

#include <algorithm>
#include <utility>

#include "tune/metrics.h"

namespace trainyard::store {
namespace {

api::Json RowJson(const ObservationRow& row) {
  return {{"t", row.time_us}, {"v", row.value}, {"s", row.step}, {"i", row.index}};
}

ObservationRow RowOf(const std::string& metric, const api::Json& body) {
  if (!body.is_object()) return {.metric = metric};
  return {.time_us = body.value("t", int64_t{0}),
          .metric = metric,
          .value = body.value("v", ""),
          .step = body.value("s", kNoStep),
          .index = body.value("i", int64_t{0})};
}

// Whether `value` is beyond `bound` (a summary's value, or "unavailable")
// as `better` orders numbers: the first such value wins ties, as
// tune::Summarize keeps it.
template <class Better>
bool Beyond(const std::string& value, const std::string& bound, Better better) {
  std::optional<double> v = tune::ParseMetricValue(value);
  if (!v) return false;
  std::optional<double> b = tune::ParseMetricValue(bound);
  return !b || better(*v, *b);
}

}  // namespace

int64_t Observe(ObservationSeries& series, const ObservationRow& row, int64_t seq) {
  ObservationRow at = row;
  at.index = series.count++;
  bool first = at.index == 0;
  if (Beyond(at.value, series.min, std::less<>())) series.min = at.value;
  if (Beyond(at.value, series.max, std::greater<>())) series.max = at.value;
  if (first || at.time_us >= series.latest.time_us) series.latest = at;
  if (first || std::pair(at.StepOrIndex(), at.time_us) >=
                   std::pair(series.top.StepOrIndex(), series.top.time_us)) {
    series.top = at;
  }
  series.last = at;
  series.last_seq = seq;
  return at.index;
}

int64_t KeptCap(size_t metrics) {
  return std::min(kKeptPerMetric, kKeptPerLog / static_cast<int64_t>(std::max<size_t>(metrics, 1)));
}

bool Thin(ObservationSeries& series, int64_t cap) {
  int64_t before = series.stride;
  while ((series.count + series.stride - 1) / series.stride > cap) series.stride *= 2;
  return series.stride != before;
}

api::Json SeriesJson(const ObservationSeries& series) {
  return {{"count", series.count},
          {"stride", series.stride},
          {"min", series.min},
          {"max", series.max},
          {"latest", RowJson(series.latest)},
          {"top", RowJson(series.top)},
          {"last", RowJson(series.last)},
          {"lastSeq", series.last_seq}};
}

ObservationSeries SeriesOf(const std::string& metric, const api::Json& body) {
  ObservationSeries s{.metric = metric};
  if (!body.is_object()) return s;
  s.count = body.value("count", int64_t{0});
  s.stride = std::max<int64_t>(1, body.value("stride", int64_t{1}));
  s.min = body.value("min", s.min);
  s.max = body.value("max", s.max);
  s.latest = RowOf(metric, body.value("latest", api::Json()));
  s.top = RowOf(metric, body.value("top", api::Json()));
  s.last = RowOf(metric, body.value("last", api::Json()));
  s.last_seq = body.value("lastSeq", int64_t{0});
  return s;
}

}  // namespace trainyard::store
