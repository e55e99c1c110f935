#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace trainyard {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return InvalidArgumentError("must be positive");
  return x;
}

Status Check(int x) {
  RETURN_IF_ERROR(ParsePositive(x));
  return OkStatus();
}

Result<int> Double(int x) {
  ASSIGN_OR_RETURN(int v, ParsePositive(x));
  return v * 2;
}

Result<std::unique_ptr<int>> MoveOnly() { return std::make_unique<int>(7); }

Result<int> UseMoveOnly() {
  ASSIGN_OR_RETURN(std::unique_ptr<int> p, MoveOnly());
  return *p;
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(OkStatus().ok());
  Status s = NotFoundError("no job x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no job x");
  EXPECT_EQ(OkStatus().ToString(), "OK");
}

TEST(StatusTest, ReturnIfErrorPropagates) {
  EXPECT_TRUE(Check(1).ok());
  EXPECT_EQ(Check(0), InvalidArgumentError("must be positive"));
}

TEST(StatusTest, AssignOrReturn) {
  EXPECT_EQ(*Double(4), 8);
  EXPECT_EQ(Double(-1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*UseMoveOnly(), 7);
}

// The status of a temporary Result outlives it where RETURN_IF_ERROR
// holds it (ASan saw the reference dangle when it did not).
Status StatusOfATemporary(int x) {
  RETURN_IF_ERROR(Double(x).status());
  return OkStatus();
}

TEST(StatusTest, ATemporarysStatusIsReturnedWhole) {
  EXPECT_TRUE(StatusOfATemporary(2).ok());
  Status s = StatusOfATemporary(-1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(s.message().empty());
}

TEST(StatusTest, ResultStatusOfValueIsOk) {
  Result<int> r = 3;
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
}

}  // namespace
}  // namespace trainyard
