#include "kube/url.h"

#include <gtest/gtest.h>

namespace kc::kube {
namespace {

TEST(UrlEncodeTest, Table) {
  struct Case {
    std::string in, want;
  };
  const Case cases[] = {
      {"", ""},
      {"abc-._~XYZ019", "abc-._~XYZ019"},
      {"app=llama", "app%3Dllama"},
      {"a in (x, y)", "a%20in%20%28x%2C%20y%29"},
      {"tier!=db,env", "tier%21%3Ddb%2Cenv"},
      {"k/v+1&", "k%2Fv%2B1%26"},
      {"\xC3\xA9", "%C3%A9"},
  };
  for (const auto& c : cases) EXPECT_EQ(UrlEncode(c.in), c.want) << c.in;
}

TEST(QueryTest, SkipsEmptyAndKeepsOrder) {
  Query q;
  q.Add("labelSelector", "a=b").Add("fieldSelector", "").AddAlways("watch", "1").Add("limit", "2");
  EXPECT_EQ(q.ToString(), "?labelSelector=a%3Db&watch=1&limit=2");
  EXPECT_EQ(Query().ToString(), "");
}

}  // namespace
}  // namespace kc::kube
