#include "base/numbers.h"

#include <gtest/gtest.h>

#include <string>

namespace kc {
namespace {

TEST(ParseInt64Test, AcceptsDecimalIntegersInRange) {
  EXPECT_EQ(*ParseInt64("0", "x"), 0);
  EXPECT_EQ(*ParseInt64("-12", "x"), -12);
  EXPECT_EQ(*ParseInt64("64", "--workers", 1, 64), 64);
  EXPECT_EQ(*ParseInt64("9223372036854775807", "x"), INT64_MAX);
  EXPECT_EQ(*ParseInt64("-9223372036854775808", "x"), INT64_MIN);
}

TEST(ParseInt64Test, RejectsEverythingElseNamingTheField) {
  struct Case {
    std::string text;
    std::string want;
  } cases[] = {
      {"", "--workers: \"\" is not an integer"},
      {"4x", "--workers: \"4x\" is not an integer"},
      {"+4", "is not an integer"},
      {" 4", "is not an integer"},
      {"-", "is not an integer"},
      {"4-", "is not an integer"},
      {"1e3", "is not an integer"},
      {"0x10", "is not an integer"},
      {"65", "--workers: 65 is out of range 1..64"},
      {"0", "--workers: 0 is out of range 1..64"},
      {"99999999999999999999", "is out of range 1..64"},
      {"-99999999999999999999", "is out of range 1..64"},
      {std::string(10000, '9'), "is out of range"},
  };
  for (const auto& c : cases) {
    auto v = ParseInt64(c.text, "--workers", 1, 64);
    ASSERT_FALSE(v.ok()) << c.text;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(v.status().message().find(c.want), std::string::npos) << v.status().message();
    EXPECT_LT(v.status().message().size(), 200u) << "a hostile value is quoted, bounded";
  }
}

TEST(CheckedArithmeticTest, ReportsOverflow) {
  int64_t out = 7;
  EXPECT_TRUE(CheckedAdd(2, 3, &out));
  EXPECT_EQ(out, 5);
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1, &out));
  EXPECT_EQ(out, 5);
  EXPECT_TRUE(CheckedMul(-4, 5, &out));
  EXPECT_EQ(out, -20);
  EXPECT_FALSE(CheckedMul(INT64_MAX / 2, 3, &out));
  EXPECT_FALSE(CheckedMul(999999999999, 3600000000000, &out));
}

}  // namespace
}  // namespace kc
