// What `trainyard metrics` prints of an ObservationLog.
#include "cli/metrics_view.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trainyard::cli {
namespace {

using ::testing::HasSubstr;

api::Json Log(const std::vector<std::pair<std::string, std::string>>& values) {
  api::Json log = {{"metricLogs", api::Json::array()}};
  int second = 0;
  for (const auto& [name, value] : values) {
    log["metricLogs"].push_back({{"timeStamp", fmt::format("2026-11-27T10:00:{:02}Z", second++)},
                                 {"metric", {{"name", name}, {"value", value}}}});
  }
  return log;
}

TEST(MetricsViewTest, ASparklineRisesWithItsValuesAndFitsItsWidth) {
  EXPECT_EQ(Sparkline({1, 2, 3, 4, 5, 6, 7, 8}, 8), "▁▂▃▄▅▆▇█");
  EXPECT_EQ(Sparkline({5, 5, 5}, 8), "▅▅▅");
  EXPECT_EQ(Sparkline({1, 1, 8, 8}, 2), "▁█") << "each character the mean of its share";
  EXPECT_EQ(Sparkline({}, 8), "");
}

TEST(MetricsViewTest, EachMetricIsSummedUpAndOneShownStepByStep) {
  api::Json log = Log({{"loss", "0.9"}, {"accuracy", "0.5"}, {"loss", "0.4"}, {"loss", "0.1"}});
  std::string summary = MetricsView(log, "");
  EXPECT_THAT(summary, ::testing::ContainsRegex("accuracy +1  0.5 +0.5 +0.5 +▅"));
  EXPECT_THAT(summary, ::testing::ContainsRegex("loss +3  0.1 +0.1 +0.9 +█▄▁"));
  std::string loss = MetricsView(log, "loss");
  EXPECT_THAT(loss, HasSubstr("     0  0.9             2026-11-27T10:00:00Z\n"));
  EXPECT_THAT(loss, HasSubstr("     2  0.1             2026-11-27T10:00:03Z\n"));
  // A step logged with the value is shown as it is.
  api::Json stepped = log;
  stepped["metricLogs"][0]["step"] = 100;
  EXPECT_THAT(MetricsView(stepped, "loss"), HasSubstr("   100  0.9 "));
  EXPECT_TRUE(HasMetric(log, "loss"));
  EXPECT_FALSE(HasMetric(log, "lr"));
  EXPECT_EQ(MetricsView(log, "lr"), "No metric lr; there are: accuracy, loss\n");
  EXPECT_EQ(MetricsView(Log({}), ""), "No metrics collected yet.\n");
}

// A long value widens its column rather than pushing the next one out of
// line.
TEST(MetricsViewTest, ALongValueWidensItsColumn) {
  api::Json log = Log({{"loss", "0.12345678901234567890"}, {"loss", "0.5"}});
  std::string steps = MetricsView(log, "loss");
  EXPECT_THAT(steps, HasSubstr("0.12345678901234567890  2026"));
  EXPECT_THAT(steps, HasSubstr("0.5                     2026"));
  std::string summary =
      MetricsView(Log({{"a_metric_whose_name_is_long", "1"}, {"b", "0.12345678901234567890"}}), "");
  EXPECT_THAT(summary, HasSubstr("a_metric_whose_name_is_long      1  1 "));
  EXPECT_THAT(summary, HasSubstr("b                                1  0.12345678901234567890 "));
}

}  // namespace
}  // namespace trainyard::cli
