#include "common/strings.h"

#include <gtest/gtest.h>

namespace trainyard {
namespace {

TEST(StringsTest, Join) {
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ","), "");
}

// FNV-1a's published values: a name or seed made from it today is the
// same after any rebuild.
TEST(StringsTest, StableHashIsFnv1a) {
  EXPECT_EQ(StableHash(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(StableHash("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(StableHash("foobar"), 0x85944171f73967e8ull);
}

TEST(StringsTest, AsciiLower) {
  EXPECT_EQ(AsciiLower("Worker"), "worker");
  EXPECT_EQ(AsciiLower("PS-0"), "ps-0");
  EXPECT_EQ(AsciiUpper("Last Seen-0"), "LAST SEEN-0");
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

namespace trainyard {
namespace {

TEST(Base64Test, DecodesEveryPaddingAndRefusesWhatIsNotBase64) {
  EXPECT_EQ(Base64Decode(""), "");
  EXPECT_EQ(Base64Decode("aGk="), "hi");
  EXPECT_EQ(Base64Decode("aA=="), "h");
  EXPECT_EQ(Base64Decode("aGV5"), "hey");
  EXPECT_EQ(Base64Decode("AP8+/w=="), std::string("\x00\xff\x3e\xff", 4));
  EXPECT_EQ(Base64Decode("aGk"), std::nullopt);       // not a multiple of 4
  EXPECT_EQ(Base64Decode("a=Gk"), std::nullopt);      // padding inside
  EXPECT_EQ(Base64Decode("aGk!"), std::nullopt);      // outside the alphabet
  EXPECT_EQ(Base64Decode("aGk=aGk="), std::nullopt);  // padding before the end
}

TEST(Base64Test, EncodesWhatDecodesBack) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("h"), "aA==");
  EXPECT_EQ(Base64Encode("hi"), "aGk=");
  EXPECT_EQ(Base64Encode("hey"), "aGV5");
  std::string bytes("\x00\xff\x3e\xff", 4);
  EXPECT_EQ(Base64Encode(bytes), "AP8+/w==");
  EXPECT_EQ(Base64Decode(Base64Encode(bytes)), bytes);
}

}  // namespace
}  // namespace trainyard

namespace trainyard {
namespace {

TEST(Utf8LengthTest, CountsCharactersNotBytes) {
  EXPECT_EQ(Utf8Length(""), 0u);
  EXPECT_EQ(Utf8Length("loss"), 4u);
  EXPECT_EQ(Utf8Length("\xc3\xa9t\xc3\xa9"), 3u);             // été
  EXPECT_EQ(Utf8Length("\xe5\xad\xa6\xf0\x9f\x98\x80"), 2u);  // 学😀
}

TEST(ShellQuoteTest, OneWordWhateverItHolds) {
  EXPECT_EQ(ShellQuote("/usr/bin/trainyard"), "'/usr/bin/trainyard'");
  EXPECT_EQ(ShellQuote("it's $HOME"), "'it'\\''s $HOME'");
  EXPECT_EQ(ShellQuote(""), "''");
}

TEST(SplitNonEmptyTest, EmptyPartsAreDropped) {
  EXPECT_EQ(SplitNonEmpty("0,,2,", ','), (std::vector<std::string>{"0", "2"}));
  EXPECT_EQ(SplitNonEmpty("", ','), std::vector<std::string>{});
  EXPECT_EQ(SplitNonEmpty("MIG-a", ','), std::vector<std::string>{"MIG-a"});
}

}  // namespace
}  // namespace trainyard
