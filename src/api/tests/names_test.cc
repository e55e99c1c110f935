#include "api/names.h"

#include <gtest/gtest.h>

namespace trainyard::api {
namespace {

TEST(NamesTest, Dns1035Label) {
  EXPECT_TRUE(Dns1035LabelProblems("pytorch-simple").empty());
  EXPECT_TRUE(Dns1035LabelProblems("a").empty());
  EXPECT_FALSE(Dns1035LabelProblems("1abc").empty());  // must start with a letter
  EXPECT_FALSE(Dns1035LabelProblems("Abc").empty());
  EXPECT_FALSE(Dns1035LabelProblems("abc-").empty());
  EXPECT_FALSE(Dns1035LabelProblems("a.b").empty());
  EXPECT_FALSE(Dns1035LabelProblems("").empty());
  EXPECT_EQ(Dns1035LabelProblems(std::string(64, 'a')),
            NameProblems{"must be no more than 63 characters"});
  EXPECT_TRUE(Dns1035LabelProblems(std::string(63, 'a')).empty());
}

TEST(NamesTest, Dns1123) {
  EXPECT_TRUE(Dns1123LabelProblems("1abc").empty());
  EXPECT_FALSE(Dns1123LabelProblems("a_b").empty());
  EXPECT_TRUE(Dns1123SubdomainProblems("team-a.queue").empty());
  EXPECT_FALSE(Dns1123SubdomainProblems("a..b").empty());
  EXPECT_FALSE(Dns1123SubdomainProblems(".a").empty());
  EXPECT_FALSE(Dns1123SubdomainProblems("a.").empty());
}

TEST(NamesTest, QualifiedNamesAndLabelValues) {
  EXPECT_TRUE(QualifiedNameProblems("app").empty());
  EXPECT_TRUE(QualifiedNameProblems("kueue.x-k8s.io/queue-name").empty());
  EXPECT_TRUE(QualifiedNameProblems("nvidia.com/mig-3g.20gb").empty());
  EXPECT_EQ(QualifiedNameProblems("/x"), NameProblems{"prefix part must be non-empty"});
  EXPECT_EQ(QualifiedNameProblems("a/"), NameProblems{"name part must be non-empty"});
  EXPECT_FALSE(QualifiedNameProblems("-bad").empty());
  EXPECT_FALSE(QualifiedNameProblems("Bad_Prefix/x").empty());
  EXPECT_TRUE(LabelValueProblems("").empty());
  EXPECT_TRUE(LabelValueProblems("v1.2_x").empty());
  EXPECT_FALSE(LabelValueProblems("a b").empty());
}

TEST(NamesTest, EnvVarAndPortNames) {
  EXPECT_TRUE(EnvVarNameProblems("MASTER_ADDR").empty());
  EXPECT_TRUE(EnvVarNameProblems("my.env-name").empty());
  EXPECT_FALSE(EnvVarNameProblems("1X").empty());
  EXPECT_FALSE(EnvVarNameProblems("A=B").empty());
  EXPECT_TRUE(PortNameProblems("pytorchjob-port").empty());
  EXPECT_EQ(PortNameProblems("a-very-long-port-name"),
            NameProblems{"must be no more than 15 characters"});
  EXPECT_EQ(PortNameProblems("123"), NameProblems{"must contain at least one letter (a-z)"});
  EXPECT_EQ(PortNameProblems("a--b"), NameProblems{"must not contain consecutive hyphens"});
}

}  // namespace
}  // namespace trainyard::api
