#include "tune/median_stop.h"

#include <gtest/gtest.h>

#include <vector>

namespace trainyard::tune {
namespace {

using Curves = std::vector<std::vector<double>>;

MedianStopSettings Rule(int min_trials, int start_step) {
  return {.min_trials_required = min_trials, .start_step = start_step};
}

TEST(MedianStopSettingsTest, DefaultsAreUpstreams) {
  Result<MedianStopSettings> settings = ParseMedianStopSettings({});
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->min_trials_required, 3);
  EXPECT_EQ(settings->start_step, 4);
}

TEST(MedianStopSettingsTest, ReadsBothSettings) {
  Result<MedianStopSettings> settings =
      ParseMedianStopSettings({{"min_trials_required", "1"}, {"start_step", "2"}});
  ASSERT_TRUE(settings.ok()) << settings.status().ToString();
  EXPECT_EQ(settings->min_trials_required, 1);
  EXPECT_EQ(settings->start_step, 2);
}

TEST(MedianStopSettingsTest, RejectsUnknownAndOutOfRangeSettings) {
  Result<MedianStopSettings> unknown = ParseMedianStopSettings({{"min_trials", "3"}});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.status().message(), "unknown setting min_trials for algorithm medianstop");
  EXPECT_EQ(ParseMedianStopSettings({{"min_trials_required", "0"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMedianStopSettings({{"start_step", "0"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseMedianStopSettings({{"start_step", "two"}}).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(MedianStopTest, NamesTheAlgorithm) {
  EXPECT_EQ(EarlyStoppingNames(), std::vector<std::string>{"medianstop"});
}

TEST(MedianStopTest, NeverStopsBeforeStartStep) {
  Curves finished = {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}};
  std::vector<double> running = {9, 9, 9};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 4), running, finished));
  running.push_back(9);
  EXPECT_TRUE(ShouldStopByMedian(Rule(3, 4), running, finished));
}

TEST(MedianStopTest, NeverStopsBelowMinTrialsRequired) {
  Curves finished = {{1, 1, 1, 1}, {1, 1, 1, 1}};
  std::vector<double> running = {9, 9, 9, 9};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 1), running, finished));
  EXPECT_TRUE(ShouldStopByMedian(Rule(2, 1), running, finished));
}

TEST(MedianStopTest, OnlyTrialsThatReachedTheStepCount) {
  // Three finished trials, but only two reported a fifth value.
  Curves finished = {{1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, {1, 1, 1, 1}};
  std::vector<double> running = {9, 9, 9, 9, 9};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 1), running, finished));
  running.pop_back();
  EXPECT_TRUE(ShouldStopByMedian(Rule(3, 1), running, finished));
}

TEST(MedianStopTest, StopsLaterThanStartStepToo) {
  // The finished trials improve to 1 by step 6; the running one is as good as
  // them up to step 4 and then stalls at 5.
  Curves finished = {{5, 5, 5, 5, 2, 1}, {5, 5, 5, 5, 2, 1}, {5, 5, 5, 5, 2, 1}};
  std::vector<double> running = {5, 5, 5, 5};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 2), running, finished));
  running.push_back(5);
  EXPECT_TRUE(ShouldStopByMedian(Rule(3, 2), running, finished));
}

TEST(MedianStopTest, UsesTheBestLossSoFar) {
  // The running trial's latest loss is bad, but it was better than the median.
  Curves finished = {{3, 3}, {3, 3}, {3, 3}};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 2), std::vector<double>{1, 9}, finished));
  // And the finished trials' best, not their last, counts.
  Curves dipped = {{1, 5}, {1, 5}, {1, 5}};
  EXPECT_TRUE(ShouldStopByMedian(Rule(3, 2), std::vector<double>{2, 2}, dipped));
}

TEST(MedianStopTest, TiesDoNotStop) {
  Curves finished = {{1, 2}, {1, 2}, {1, 2}};
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 1), std::vector<double>{2, 1}, finished));
}

TEST(MedianStopTest, UsesTheMedianNotTheMean) {
  // Best values 1, 2, 100: the median is 2, the mean 34.3.
  Curves finished = {{1}, {2}, {100}};
  EXPECT_TRUE(ShouldStopByMedian(Rule(3, 1), std::vector<double>{3}, finished));
  EXPECT_FALSE(ShouldStopByMedian(Rule(3, 1), std::vector<double>{2}, finished));
}

TEST(MedianStopTest, EvenCountsAverageTheMiddleTwo) {
  // Best values 1, 2, 4, 10: the median is 3.
  Curves finished = {{1}, {2}, {4}, {10}};
  EXPECT_FALSE(ShouldStopByMedian(Rule(1, 1), std::vector<double>{3}, finished));
  EXPECT_TRUE(ShouldStopByMedian(Rule(1, 1), std::vector<double>{3.5}, finished));
}

}  // namespace
}  // namespace trainyard::tune
