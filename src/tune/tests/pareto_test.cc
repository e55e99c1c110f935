#include "tune/pareto.h"

#include <gtest/gtest.h>

namespace trainyard::tune {
namespace {

TEST(ParetoTest, FrontsRankEachPointByHowManyLayersDominateIt) {
  // (1,4) (2,2) (4,1) trade off; (3,3) is beaten by (2,2); (5,5) by all.
  std::vector<Losses> points = {{1, 4}, {3, 3}, {2, 2}, {5, 5}, {4, 1}};
  EXPECT_EQ(ParetoFronts(points), (std::vector<int>{0, 1, 0, 2, 0}));
}

TEST(ParetoTest, EqualPointsShareAFront) {
  EXPECT_EQ(ParetoFronts({{1, 1}, {1, 1}, {2, 2}}), (std::vector<int>{0, 0, 1}));
  EXPECT_FALSE(Dominates({1, 1}, {1, 1}));
  EXPECT_TRUE(Dominates({1, 1}, {1, 2}));
}

TEST(ParetoTest, RankLossesOrderFrontsThenSpreadWithinOne) {
  // One front of four: the two ends first (infinite crowding), then the
  // interior point with more room, then the crowded one.
  std::vector<Losses> points = {{0, 10}, {1, 9}, {5, 5}, {10, 0}, {6, 6}};
  std::vector<double> rank = ParetoRankLosses(points);
  EXPECT_LT(rank[0], 1);
  EXPECT_LT(rank[3], 1);
  EXPECT_LT(rank[2], rank[1]);  // (5,5) is alone in its stretch; (1,9) sits by (0,10)
  EXPECT_LT(rank[0], rank[2]);
  EXPECT_GE(rank[4], 1);  // (6,6): dominated by (5,5)
  EXPECT_LT(rank[4], 2);
}

TEST(ParetoTest, HypervolumeIsTheAreaTheFrontDominates) {
  // Reference (4,4): (1,3) adds 3x1, (2,2) 2x1 more, (3,1) 1x1 more.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 3}, {2, 2}, {3, 1}}, {4, 4}), 6);
  // Dominated and outside points add nothing.
  EXPECT_DOUBLE_EQ(Hypervolume({{1, 3}, {2, 2}, {3, 1}, {3, 3}, {5, 0}}, {4, 4}), 6);
  EXPECT_DOUBLE_EQ(Hypervolume({}, {4, 4}), 0);
}

TEST(ParetoTest, HypervolumeInThreeDimensions) {
  // One point: a box. Two: the union of boxes, 2*1*1 + 1*2*1 - 1*1*1... by hand:
  // (0,0,1) to ref (2,2,2): 2*2*1 = 4; (1,1,0): 1*1*2 = 2; overlap 1*1*1 = 1.
  EXPECT_DOUBLE_EQ(Hypervolume({{0, 0, 1}}, {2, 2, 2}), 4);
  EXPECT_DOUBLE_EQ(Hypervolume({{0, 0, 1}, {1, 1, 0}}, {2, 2, 2}), 5);
}

}  // namespace
}  // namespace trainyard::tune
