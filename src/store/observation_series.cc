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
  return {.time_us = api::IntAt(body, "t"),
          .metric = metric,
          .value = api::StringAt(body, "v"),
          .step = api::IntAt(body, "s", kNoStep),
          .index = api::IntAt(body, "i")};
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
  s.count = api::IntAt(body, "count");
  s.stride = std::max<int64_t>(1, api::IntAt(body, "stride", 1));
  s.min = api::StringAt(body, "min", s.min);
  s.max = api::StringAt(body, "max", s.max);
  s.latest = RowOf(metric, api::ValueAt(body, "latest"));
  s.top = RowOf(metric, api::ValueAt(body, "top"));
  s.last = RowOf(metric, api::ValueAt(body, "last"));
  s.last_seq = api::IntAt(body, "lastSeq");
  return s;
}

}  // namespace trainyard::store
