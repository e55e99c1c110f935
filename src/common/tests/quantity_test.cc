#include "common/quantity.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

int64_t Milli(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status().ToString();
  return q.ok() ? q->milli() : -1;
}

TEST(QuantityTest, DecimalSuffixes) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1"), 1000);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("0.1"), 100);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("5."), 5000);
  EXPECT_EQ(Milli("2k"), 2'000'000);
  EXPECT_EQ(Milli("3M"), 3'000'000'000);
  EXPECT_EQ(Milli("1G"), 1'000'000'000'000);
  EXPECT_EQ(Milli("+4"), 4000);
}

TEST(QuantityTest, BinarySuffixesAreExact) {
  EXPECT_EQ(Milli("1Ki"), 1024'000);
  EXPECT_EQ(Milli("4Gi"), 4LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("16Gi"), 16LL * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("1.5Gi"), 1536LL * 1024 * 1024 * 1000);
  EXPECT_EQ(Quantity::Parse("2Ti")->Value(), 2LL << 40);
}

TEST(QuantityTest, DecimalExponent) {
  EXPECT_EQ(Milli("2e3"), 2'000'000);
  EXPECT_EQ(Milli("2E3"), 2'000'000);
  EXPECT_EQ(Milli("1e-3"), 1);
  EXPECT_EQ(Milli("12e+2"), 1'200'000);
  EXPECT_EQ(Milli("1.25e2"), 125'000);
}

TEST(QuantityTest, SubMilliRoundsUp) {
  EXPECT_EQ(Milli("100n"), 1);
  EXPECT_EQ(Milli("1u"), 1);
  EXPECT_EQ(Milli("0.0001"), 1);
  EXPECT_EQ(Milli("1000u"), 1);
  EXPECT_EQ(Milli("1001u"), 2);
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli("0n"), 0);
  EXPECT_EQ(Milli("-1.5"), -1500);
  EXPECT_EQ(Milli("-100n"), 0);  // toward +infinity
}

TEST(QuantityTest, ValueRoundsUpToWholeUnits) {
  EXPECT_EQ(Quantity::Parse("1500m")->Value(), 2);
  EXPECT_EQ(Quantity::Parse("2")->Value(), 2);
  EXPECT_TRUE(Quantity::Parse("2")->IsInteger());
  EXPECT_FALSE(Quantity::Parse("0.5")->IsInteger());
}

TEST(QuantityTest, RejectsMalformed) {
  for (const char* bad : {"", "m", "1x", "1KI", "1..2", "1.2.3", "abc", "1 Gi", "Gi", "1e", "1e+",
                          "--1", "1Gib", "0x10", "1e99999", "1mm"}) {
    Result<Quantity> q = Quantity::Parse(bad);
    ASSERT_FALSE(q.ok()) << "accepted " << bad;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(q.status().message(), kQuantityFormatMessage) << bad;
  }
}

TEST(QuantityTest, RejectsWhatCannotBeHeld) {
  for (const char* big : {"10Ei", "1e30", "99999999999999999999", "9300T"}) {
    Result<Quantity> q = Quantity::Parse(big);
    ASSERT_FALSE(q.ok()) << "accepted " << big;
    EXPECT_EQ(q.status().code(), StatusCode::kOutOfRange) << big;
  }
  EXPECT_EQ(Milli("9000T"), 9'000'000'000'000'000'000);
}

TEST(QuantityTest, KeepsTextComparesValue) {
  Quantity a = *Quantity::Parse("1000m");
  Quantity b = *Quantity::Parse("1");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.text(), "1000m");
  EXPECT_LT(*Quantity::Parse("999m"), b);
  EXPECT_EQ(Quantity::FromMilli(1500).text(), "1500m");
  EXPECT_EQ(Quantity::FromUnits(3).text(), "3");
}

}  // namespace
}  // namespace trainyard
