#include "base/percent_encode.h"

#include <gtest/gtest.h>

namespace kc {
namespace {

TEST(PercentEncode, Table) {
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
      {std::string("a\0b", 3), "a%00b"},
      {"\x7F\xFF", "%7F%FF"},
  };
  for (const auto& c : cases) EXPECT_EQ(PercentEncode(c.in), c.want) << c.in;
}

}  // namespace
}  // namespace kc
