#include "kube/rate_limiter.h"

#include <gtest/gtest.h>

namespace trainyard::kube {
namespace {

using std::chrono::milliseconds;

TEST(RateLimiterTest, ABurstGoesAtOnceThenRequestsArePaced) {
  RateLimiter limiter(/*qps=*/20, /*burst=*/30);
  TimePoint now = TimePoint(std::chrono::seconds(1000));
  for (int i = 0; i < 30; ++i) EXPECT_EQ(limiter.Reserve(now), Duration::zero()) << i;
  // The 31st waits one token's time (50 ms at 20 qps), the 32nd two.
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(limiter.Reserve(now)), milliseconds(50));
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(limiter.Reserve(now)), milliseconds(100));
  // A second later 20 tokens have come back, two of them already promised.
  now += std::chrono::seconds(1);
  for (int i = 0; i < 18; ++i) EXPECT_EQ(limiter.Reserve(now), Duration::zero()) << i;
  EXPECT_GT(limiter.Reserve(now), Duration::zero());
}

TEST(RateLimiterTest, AQuietSpellRefillsNoMoreThanTheBurst) {
  RateLimiter limiter(/*qps=*/1, /*burst=*/2);
  TimePoint now = TimePoint(std::chrono::seconds(1000));
  limiter.Reserve(now);
  now += std::chrono::hours(1);
  EXPECT_EQ(limiter.Reserve(now), Duration::zero());
  EXPECT_EQ(limiter.Reserve(now), Duration::zero());
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(limiter.Reserve(now)), milliseconds(1000));
}

TEST(RateLimiterTest, NoQpsIsNoLimit) {
  RateLimiter limiter(/*qps=*/0, /*burst=*/1);
  TimePoint now = TimePoint(std::chrono::seconds(1000));
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(limiter.Reserve(now), Duration::zero());
}

}  // namespace
}  // namespace trainyard::kube
