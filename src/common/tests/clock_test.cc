#include "common/clock.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(FakeClockTest, MovesOnlyWhenTold) {
  FakeClock clock;
  TimePoint start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(std::chrono::seconds(90));
  EXPECT_EQ(clock.Now() - start, std::chrono::seconds(90));
  clock.Set(start);
  EXPECT_EQ(clock.Now(), start);
}

TEST(ClockTest, FormatsRfc3339InUtc) {
  EXPECT_EQ(FormatRfc3339(TimePoint(std::chrono::seconds(1'700'000'000))), "2023-11-14T22:13:20Z");
}

TEST(ClockTest, ParsesWhatItFormats) {
  TimePoint t(std::chrono::seconds(1'700'000'000));
  EXPECT_EQ(ParseRfc3339(FormatRfc3339(t)), t);
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("2023-11-14T22:13:20Zjunk"), std::nullopt);
  EXPECT_EQ(ParseRfc3339(""), std::nullopt);
}

TEST(ClockTest, ParsesGoDurationsAsKubernetesFlagsTakeThem) {
  using std::chrono::milliseconds;
  auto ms = [](std::string_view text) -> int64_t {
    std::optional<Duration> d = ParseGoDuration(text);
    return d ? std::chrono::duration_cast<milliseconds>(*d).count() : -1;
  };
  EXPECT_EQ(ms("15s"), 15000);
  EXPECT_EQ(ms("500ms"), 500);
  EXPECT_EQ(ms("1m30s"), 90000);
  EXPECT_EQ(ms("1.5h"), 5400000);
  EXPECT_EQ(ms("0"), 0);
  for (std::string_view bad : {"", "15", "s", "-1s", "1x", "1.2.3s", "1s2"}) {
    EXPECT_EQ(ParseGoDuration(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace trainyard
