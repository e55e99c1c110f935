#include "tracking/metric_series.h"

#include <gtest/gtest.h>

namespace trainyard::tracking {
namespace {

std::vector<store::ObservationRow> Loss(int n) {
  std::vector<store::ObservationRow> rows;
  for (int i = 0; i < n; ++i) {
    // A spike at step 500 that a mean would hide.
    double value = i == 500 ? 100.0 : 1.0 / (1 + i);
    rows.push_back({.time_us = int64_t{i} * 1'000'000,
                    .metric = "loss",
                    .value = std::to_string(value),
                    .step = i});
  }
  return rows;
}

TEST(MetricSeriesTest, AShortSeriesIsEveryValue) {
  std::vector<store::ObservationRow> rows = {
      {.time_us = 1'000'000, .metric = "loss", .value = "0.5", .index = 0},
      {.time_us = 2'000'000, .metric = "acc", .value = "0.9", .index = 0},
      {.time_us = 3'000'000, .metric = "loss", .value = "NaN", .index = 1},
      {.time_us = 4'000'000, .metric = "loss", .value = "0.25", .index = 2}};
  api::Json series = MetricSeries(rows, {});
  ASSERT_EQ(series["series"].size(), 2u);
  const api::Json& loss = series["series"][1];
  EXPECT_EQ(loss["name"], "loss");
  // Without steps, a value's place stands for one; NaN is left out.
  EXPECT_EQ(loss["step"], (api::Json{0, 2}));
  EXPECT_EQ(loss["min"], (api::Json{0.5, 0.25}));
  EXPECT_EQ(loss["time"], (api::Json{1.0, 4.0}));
}

TEST(MetricSeriesTest, ALongSeriesKeepsEachBucketsLowAndHigh) {
  api::Json series = MetricSeries(Loss(10'000), {.metric = "loss", .points = 100});
  const api::Json& loss = series["series"][0];
  EXPECT_EQ(loss["count"], 10'000);
  EXPECT_EQ(loss["step"].size(), 100u);
  double highest = 0;
  for (const api::Json& v : loss["max"]) highest = std::max(highest, v.get<double>());
  EXPECT_EQ(highest, 100.0);  // the spike survives
  EXPECT_EQ(loss["min"].back().get<double>(), 1.0 / 10'000);
  EXPECT_EQ(loss["value"].back().get<double>(), 1.0 / 10'000);  // the bucket's last
}

TEST(MetricSeriesTest, StepsAcrossAllOfInt64AreBucketed) {
  std::vector<store::ObservationRow> rows;
  for (int i = 0; i < 3000; ++i) {
    int64_t step = i == 0 ? INT64_MIN + 1 : (i == 2999 ? INT64_MAX : int64_t{i});
    rows.push_back({.time_us = i, .metric = "x", .value = "1", .step = step});
  }
  api::Json series = MetricSeries(rows, {.points = 10});
  EXPECT_LE(series["series"][0]["step"].size(), 10u);
}

TEST(MetricSeriesTest, AZoomedRangeIsAskedAgainInFullDetail) {
  api::Json series = MetricSeries(Loss(10'000), {.points = 1000, .from_step = 490, .to_step = 510});
  const api::Json& loss = series["series"][0];
  EXPECT_EQ(loss["count"], 21);
  EXPECT_EQ(loss["step"].front(), 490);
  EXPECT_EQ(loss["step"].back(), 510);
}

}  // namespace
}  // namespace trainyard::tracking
