#include "kube/url.h"

#include <gtest/gtest.h>

namespace kc::kube {
namespace {

TEST(QueryTest, SkipsEmptyAndKeepsOrder) {
  Query q;
  q.Add("labelSelector", "a=b").Add("fieldSelector", "").AddAlways("watch", "1").Add("limit", "2");
  EXPECT_EQ(q.ToString(), "?labelSelector=a%3Db&watch=1&limit=2");
  EXPECT_EQ(Query().ToString(), "");
}

}  // namespace
}  // namespace kc::kube
