#include "common/strings.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(StringsTest, Join) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ","), "");
}

TEST(StringsTest, AsciiLower) {
  EXPECT_EQ(AsciiLower("Worker"), "worker");
  EXPECT_EQ(AsciiLower("PS-0"), "ps-0");
  EXPECT_EQ(AsciiLower(""), "");
}

TEST(StringsTest, EditDistance) {
  EXPECT_EQ(EditDistance("backoffLimit", "backofLimit"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("Worker", "worker"), 0u);  // case-insensitive
}

TEST(StringsTest, ClosestMatchSuggestsOnlyLikelyTypos) {
  std::vector<std::string> fields = {"backoffLimit", "cleanPodPolicy", "suspend"};
  EXPECT_EQ(ClosestMatch("backofLimit", fields), "backoffLimit");
  EXPECT_EQ(ClosestMatch("cleanpodpolicy", fields), "cleanPodPolicy");
  EXPECT_EQ(ClosestMatch("zzz", fields), std::nullopt);
}

}  // namespace
}  // namespace trainyard
