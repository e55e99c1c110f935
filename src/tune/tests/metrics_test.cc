// Metric lines as Katib's collectors read them: the default filter, custom
// filters, timestamps, JSON lines, and the min/max/latest summary.
#include "tune/metrics.h"

#include <gtest/gtest.h>

namespace trainyard::tune {
namespace {

MetricsParser Text(std::vector<std::string> names, std::vector<std::string> filters = {}) {
  Result<MetricsParser> parser =
      MetricsParser::Make(std::move(names), std::move(filters), MetricsFormat::kText);
  EXPECT_TRUE(parser.ok()) << parser.status().ToString();
  return std::move(*parser);
}

TEST(MetricsParserTest, DefaultFilterReadsUpstreamsDocumentedLines) {
  MetricsParser parser = Text({"loss", "accuracy", "Score"});
  EXPECT_EQ(parser.ParseLine("loss=0.3")[0].value, "0.3");
  EXPECT_EQ(parser.ParseLine("accuracy=.98")[0].value, ".98");
  for (const char* v : {"-7.53e-05", "-7.53e+05", "1E0", "1.23E10"}) {
    std::vector<MetricSample> samples = parser.ParseLine(std::string("Score=") + v);
    ASSERT_EQ(samples.size(), 1u) << v;
    EXPECT_EQ(samples[0].value, v);
  }
}

TEST(MetricsParserTest, EveryMatchOnALineOfKnownNamesOnly) {
  MetricsParser parser = Text({"loss", "accuracy"});
  std::vector<MetricSample> samples = parser.ParseLine("epoch=3 loss = 0.25 accuracy=0.91 lr=0.1");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0], (MetricSample{"loss", "0.25", std::nullopt}));
  EXPECT_EQ(samples[1], (MetricSample{"accuracy", "0.91", std::nullopt}));
  // A line that names no metric is not considered at all.
  EXPECT_TRUE(parser.ParseLine("epoch=3 lr=0.1").empty());
}

// A job's own metrics: no names given, every name=number on the line.
TEST(MetricsParserTest, WithoutNamesEveryNumberIsAMetric) {
  MetricsParser parser = Text({});
  std::vector<MetricSample> samples =
      parser.ParseLine("epoch=3 loss = 0.25 note=done accuracy=.91 x=");
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0], (MetricSample{"epoch", "3", std::nullopt}));
  EXPECT_EQ(samples[1], (MetricSample{"loss", "0.25", std::nullopt}));
  EXPECT_EQ(samples[2], (MetricSample{"accuracy", ".91", std::nullopt}));
  EXPECT_TRUE(parser.ParseLine("nothing to see").empty());
}

TEST(MetricsParserTest, LeadingRfc3339TokenIsTheTimestamp) {
  MetricsParser parser = Text({"loss"});
  EXPECT_EQ(parser.ParseLine("2024-01-01T00:00:00Z INFO loss=0.1")[0].timestamp_us,
            int64_t{1704067200} * 1'000'000);
  EXPECT_EQ(parser.ParseLine("2024-01-01T01:00:00.25+01:00 loss=0.1")[0].timestamp_us,
            int64_t{1704067200} * 1'000'000 + 250'000);
  EXPECT_EQ(parser.ParseLine("2024-13-01T00:00:00Z loss=0.1")[0].timestamp_us, std::nullopt);
  EXPECT_EQ(parser.ParseLine("INFO 2024-01-01T00:00:00Z loss=0.1")[0].timestamp_us, std::nullopt);
}

// int64 nanoseconds span 1678 to 2262; times beyond are refused, never wrapped.
TEST(Rfc3339Test, TimesBeyondInt64NanosecondsAreRefused) {
  EXPECT_EQ(ParseRfc3339Nanos("0189-01-01T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339Nanos("9999-12-31T23:59:59Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339Nanos("1700-01-01T00:00:00Z"), int64_t{-8520336000} * 1'000'000'000);
  EXPECT_EQ(ParseRfc3339Nanos("2262-01-01T00:00:00Z"), int64_t{9214646400} * 1'000'000'000);
}

TEST(MetricsParserTest, CustomFiltersUseTheirFirstTwoGroups) {
  // Katib's file-metrics-collector example.
  MetricsParser parser =
      Text({"accuracy", "loss"}, {R"({metricName: ([\w|-]+), metricValue: ((-?\d+)(\.\d+)?)})"});
  std::vector<MetricSample> samples = parser.ParseLine(
      "{metricName: accuracy, metricValue: 0.9}{metricName: loss, metricValue: -2}");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].value, "0.9");
  EXPECT_EQ(samples[1].value, "-2");
}

TEST(MetricsParserTest, FiltersAreCheckedWithKatibsMessages) {
  EXPECT_EQ(ValidateMetricFilter("(a)(").message().substr(0, 15), "invalid filter:");
  EXPECT_EQ(ValidateMetricFilter("loss=(.*)").message(), "two top subexpressions are required");
  EXPECT_TRUE(ValidateMetricFilter(kDefaultMetricFilter).ok());
  EXPECT_FALSE(MetricsParser::Make({"loss"}, {"x(y)"}, MetricsFormat::kText).ok());
}

TEST(MetricsParserTest, JsonLinesTakeStringsAndNumbers) {
  Result<MetricsParser> parser = MetricsParser::Make({"loss", "acc"}, {}, MetricsFormat::kJson);
  ASSERT_TRUE(parser.ok());
  std::vector<MetricSample> samples = parser->ParseLine(
      R"({"loss": "0.5", "acc": 0.75, "other": "1", "timestamp": "2024-01-01T00:00:00Z"})");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0], (MetricSample{"loss", "0.5", int64_t{1704067200} * 1'000'000}));
  EXPECT_EQ(samples[1].value, "0.75");
  EXPECT_EQ(parser->ParseLine(R"({"loss": "1", "timestamp": 1.5})")[0].timestamp_us, 1'500'000);
  EXPECT_TRUE(parser->ParseLine("loss=0.1").empty());
}

TEST(MetricValueTest, ParsesDecimalTextOnly) {
  EXPECT_EQ(ParseMetricValue(".98"), 0.98);
  EXPECT_EQ(ParseMetricValue("+1E0"), 1.0);
  EXPECT_EQ(ParseMetricValue("unavailable"), std::nullopt);
  EXPECT_EQ(ParseMetricValue("0.5abc"), std::nullopt);
  EXPECT_EQ(ParseMetricValue("nan"), std::nullopt);
}

TEST(SummarizeTest, MinMaxOverNumbersLatestByTimestamp) {
  std::vector<TimedSample> samples = {
      {"loss", "0.5", 10}, {"loss", "0.2", 30}, {"acc", "0.1", 40},
      {"loss", "0.9", 20}, {"loss", "bad", 5},  {"loss", "0.3", 30},
  };
  MetricSummary loss = Summarize("loss", samples);
  EXPECT_EQ(loss, (MetricSummary{"loss", "0.2", "0.9", "0.3"}));  // tie at 30: later row
  EXPECT_EQ(ObjectiveValue(loss, MetricStrategy::kMin), 0.2);
  EXPECT_EQ(ObjectiveValue(loss, MetricStrategy::kLatest), 0.3);
  MetricSummary none = Summarize("f1", samples);
  EXPECT_EQ(none.latest, "unavailable");
  EXPECT_EQ(ObjectiveValue(none, MetricStrategy::kMax), std::nullopt);
  // min/max unavailable falls back to latest (here: not a number either).
  MetricSummary text = Summarize("loss", {{"loss", "n/a", 1}});
  EXPECT_EQ(text.min, "unavailable");
  EXPECT_EQ(ObjectiveValue(text, MetricStrategy::kMin), std::nullopt);
}

}  // namespace
}  // namespace trainyard::tune
