#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace kc {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("x must be even");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  KC_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

Status CheckPositive(int x) {
  if (x <= 0) return InvalidArgumentError("x must be positive");
  return OkStatus();
}

Status Both(int x) {
  KC_RETURN_IF_ERROR(CheckPositive(x));
  return Half(x).status();
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(OkStatus().ok());
  Status s = NotFoundError("thing \"a\" not found");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: thing \"a\" not found");
  EXPECT_EQ(s.WithContext("loading").message(), "loading: thing \"a\" not found");
  EXPECT_TRUE(IsNotFound(s));
  EXPECT_FALSE(IsConflict(s));
}

TEST(StatusTest, StatusOrPropagates) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Both(4).ok());
  EXPECT_EQ(Both(-2).message(), "x must be positive");
  EXPECT_EQ(Both(3).message(), "x must be even");
}

TEST(StatusTest, StatusOrHoldsMoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(7);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> q = std::move(p).value();
  EXPECT_EQ(*q, 7);
}

// An OK Status carries no value: the StatusOr holds an Internal error in
// every build type (it was only an assert, so release builds returned "OK"
// with no value and value() threw bad_variant_access).
TEST(StatusTest, StatusOrFromOkStatusIsInternal) {
  StatusOr<int> from_copy = OkStatus();
  EXPECT_FALSE(from_copy.ok());
  EXPECT_EQ(from_copy.status().code(), StatusCode::kInternal);
  EXPECT_NE(from_copy.status().message().find("OK status"), std::string::npos);
  const Status ok;
  StatusOr<std::string> from_lvalue(ok);
  EXPECT_EQ(from_lvalue.status().code(), StatusCode::kInternal);
  // Propagation through the macros keeps the error.
  auto wrap = [&]() -> StatusOr<int> {
    KC_ASSIGN_OR_RETURN(int v, StatusOr<int>(OkStatus()));
    return v;
  };
  EXPECT_EQ(wrap().status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace kc
