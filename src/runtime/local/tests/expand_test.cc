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

}  // namespace
}  // namespace trainyard::runtime
