#include "tune/space.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tune/normal.h"
#include "tune/tests/test_util.h"

namespace trainyard::tune {
namespace {

TEST(NormalTest, QuantileInvertsCdf) {
  for (double p : {1e-12, 1e-5, 0.01, 0.3, 0.5, 0.77, 0.999, 1 - 1e-9}) {
    EXPECT_NEAR(NormalCdf(NormalQuantile(p)), p, 1e-14 + p * 1e-12) << p;
  }
}

TEST(SpaceTest, RejectsBoundsKatibLeavesToTheAlgorithms) {
  EXPECT_EQ(Space::Make({Double("lr", 0.5, 0.1)}).status().message(),
            "parameter \"lr\": min (0.5) must not be greater than max (0.1)");
  EXPECT_EQ(Space::Make({Double("lr", 0, 1, Distribution::kLogUniform)}).status().message(),
            "parameter \"lr\": min must be greater than 0 for a log distribution, not 0");
  Parameter bad_step = Double("x", 0, 1);
  bad_step.step = 0;
  EXPECT_FALSE(Space::Make({bad_step}).ok());
  Parameter fractional_int{.name = "n", .type = ParameterType::kInt, .min = 1.5, .max = 3};
  EXPECT_FALSE(Space::Make({fractional_int}).ok());
  Parameter twice{.name = "opt", .type = ParameterType::kCategorical, .list = {"a", "a"}};
  EXPECT_EQ(Space::Make({twice}).status().message(), "parameter \"opt\": list has \"a\" twice");
  EXPECT_FALSE(Space::Make({Double("a", 0, 1), Double("a", 0, 1)}).ok());
}

TEST(SpaceTest, SteppedDoublesPrintAsWritten) {
  Parameter lr = Double("lr", 0.01, 0.05);
  lr.step = 0.005;
  Result<Space> space = Space::Make({lr});
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->Cardinality(0), 9);
  EXPECT_EQ(space->Format(0, space->ValueAt(0, 1)), "0.015");
  EXPECT_EQ(space->Format(0, space->ValueAt(0, 8)), "0.05");
}

TEST(SpaceTest, FormatAndParseRoundTrip) {
  Parameter n{.name = "n", .type = ParameterType::kInt, .min = 1, .max = 100};
  Parameter opt{.name = "opt", .type = ParameterType::kCategorical, .list = {"sgd", "adam"}};
  Result<Space> space = Space::Make({Double("lr", 1e-5, 1, Distribution::kLogUniform), n, opt});
  ASSERT_TRUE(space.ok());
  for (double u : {0.0, 0.123456789, 0.5, 0.999}) {
    Point point = space->FromUnit(Point{u, u, u});
    Result<Point> back = space->Parse(space->Format(point));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, point);
  }
  EXPECT_EQ(space->Parse({"0.1", "3.5", "sgd"}).status().message(),
            "parameter \"n\": \"3.5\" is not an integer");
  EXPECT_EQ(space->Parse({"0.1", "3", "rmsprop"}).status().message(),
            "parameter \"opt\": \"rmsprop\" is not one of its list");
}

TEST(SpaceTest, UniformIntValuesAreEquallyLikely) {
  Parameter n{.name = "n", .type = ParameterType::kInt, .min = 1, .max = 4};
  Result<Space> space = Space::Make({n});
  ASSERT_TRUE(space.ok());
  std::map<double, int> counts;
  for (int i = 0; i < 4000; ++i) counts[space->FromUnit(0, (i + 0.5) / 4000)]++;
  EXPECT_EQ(counts, (std::map<double, int>{{1, 1000}, {2, 1000}, {3, 1000}, {4, 1000}}));
  EXPECT_DOUBLE_EQ(space->ToUnit(0, 2), 0.375);
}

TEST(SpaceTest, LogUniformIsUniformInLogSpace) {
  Result<Space> space = Space::Make({Double("lr", 1e-4, 1, Distribution::kLogUniform)});
  ASSERT_TRUE(space.ok());
  EXPECT_NEAR(space->FromUnit(0, 0.5), 1e-2, 1e-12);
  EXPECT_NEAR(space->ToUnit(0, 1e-3), 0.25, 1e-12);
}

TEST(SpaceTest, NormalStaysInsideTheBoundsAndCentres) {
  Result<Space> space = Space::Make({Double("x", -3, 3, Distribution::kNormal)});
  ASSERT_TRUE(space.ok());
  EXPECT_NEAR(space->FromUnit(0, 0.5), 0, 1e-12);
  EXPECT_GE(space->FromUnit(0, 0.0), -3);
  EXPECT_LE(space->FromUnit(0, 0.99999), 3);
  // Within one sigma (1) lies about 68% of the truncated prior.
  double one_sigma = space->ToUnit(0, 1) - space->ToUnit(0, -1);
  EXPECT_NEAR(one_sigma, 0.6827 / 0.9973, 1e-3);
  EXPECT_NEAR(space->FromUnit(0, space->ToUnit(0, 1.2345)), 1.2345, 1e-9);
}

TEST(SpaceTest, SizeCountsFiniteSpacesOnly) {
  Parameter n{.name = "n", .type = ParameterType::kInt, .min = 0, .max = 9};
  Parameter opt{.name = "opt", .type = ParameterType::kDiscrete, .list = {"1", "2", "5"}};
  Result<Space> finite = Space::Make({n, opt});
  ASSERT_TRUE(finite.ok());
  EXPECT_EQ(finite->Size(), 30);
  Result<Space> infinite = Space::Make({n, Double("lr", 0, 1)});
  ASSERT_TRUE(infinite.ok());
  EXPECT_EQ(infinite->Size(), std::nullopt);
}

}  // namespace
}  // namespace trainyard::tune
