#include "base/strings.h"

#include <gtest/gtest.h>

namespace kc {
namespace {

TEST(StrJoinTest, Table) {
  EXPECT_EQ(StrJoin({}, ", "), "");
  EXPECT_EQ(StrJoin({"a"}, ", "), "a");
  EXPECT_EQ(StrJoin({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(StrJoin({"", ""}, "; "), "; ");
}

}  // namespace
}  // namespace kc
