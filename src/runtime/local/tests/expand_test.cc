#include "runtime/local/expand.h"

#include <gtest/gtest.h>

namespace trainyard::runtime {
namespace {

std::optional<std::string> Vars(std::string_view name) {
  if (name == "POD_IP") return std::string("127.0.0.1");
  if (name == "EMPTY") return std::string();
  return std::nullopt;
}

TEST(ExpandTest, KubernetesReferenceRules) {
  EXPECT_EQ(ExpandReferences("$(POD_IP):36543", Vars), "127.0.0.1:36543");
  EXPECT_EQ(ExpandReferences("a$(EMPTY)b", Vars), "ab");
  EXPECT_EQ(ExpandReferences("$(MISSING)", Vars), "$(MISSING)");
  EXPECT_EQ(ExpandReferences("$$(POD_IP)", Vars), "$(POD_IP)");
  EXPECT_EQ(ExpandReferences("$$", Vars), "$");
  EXPECT_EQ(ExpandReferences("cost $5", Vars), "cost $5");
  EXPECT_EQ(ExpandReferences("end$", Vars), "end$");
  EXPECT_EQ(ExpandReferences("$(POD_IP", Vars), "$(POD_IP");
  EXPECT_EQ(ExpandReferences("$($(POD_IP))", Vars), "$($(POD_IP))");
}

TEST(ExpandTest, StopsAtTheBoundWithoutGoingPastIt) {
  std::string big(1000, 'x');
  auto lookup = [&](std::string_view name) -> std::optional<std::string> {
    if (name == "BIG") return big;
    return std::nullopt;
  };
  EXPECT_EQ(ExpandReferences("$(BIG)$(BIG)", lookup, 2000), big + big);
  EXPECT_EQ(ExpandReferences("$(BIG)$(BIG)!", lookup, 2000), std::nullopt);
  EXPECT_EQ(ExpandReferences("$(BIG)$(BIG)", lookup, 1999), std::nullopt);
  EXPECT_EQ(ExpandReferences(big + "$$", lookup, 1000), std::nullopt);
  EXPECT_EQ(ExpandReferences("$(MISSING)", lookup, 9), std::nullopt);  // kept as written
  EXPECT_EQ(ExpandReferences("$(MISSING)", lookup, 10), "$(MISSING)");
}

TEST(ExpandTest, DoublingReferencesEndAtTheDefaultBound) {
  // A=xx, B=$(A)$(A), ...: each value twice the one before.
  std::string value = "xx";
  int doublings = 0;
  for (std::optional<std::string> next;
       (next = ExpandReferences("$(V)$(V)", [&](std::string_view) { return value; }));) {
    value = std::move(*next);
    ++doublings;
  }
  EXPECT_EQ(value.size(), kMaxExpandedBytes);
  EXPECT_EQ(doublings, 16);
}

}  // namespace
}  // namespace trainyard::runtime
