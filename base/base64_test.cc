#include "base/base64.h"

#include <gtest/gtest.h>

namespace kc {
namespace {

TEST(DecodeBase64Test, Table) {
  struct Case {
    std::string in;
    bool ok;
    std::string want;
  };
  const Case cases[] = {
      {"", true, ""},        {"YQ==", true, "a"},          {"YWI=", true, "ab"},
      {"YWJj", true, "abc"}, {"YWJj\nZA==", true, "abcd"}, {"YWJjZA", true, "abcd"},
      {"Y", false, ""},      {"YQ==YQ==", false, ""},      {"a*b=", false, ""},
  };
  for (const auto& c : cases) {
    auto got = DecodeBase64(c.in);
    EXPECT_EQ(got.ok(), c.ok) << c.in;
    if (got.ok()) {
      EXPECT_EQ(*got, c.want) << c.in;
    }
  }
}

TEST(EncodeBase64Test, TableAndRoundTrip) {
  EXPECT_EQ(EncodeBase64(""), "");
  EXPECT_EQ(EncodeBase64("a"), "YQ==");
  EXPECT_EQ(EncodeBase64("ab"), "YWI=");
  EXPECT_EQ(EncodeBase64("abc"), "YWJj");
  EXPECT_EQ(EncodeBase64("abcd"), "YWJjZA==");
  EXPECT_EQ(EncodeBase64("foobar"), "Zm9vYmFy");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  auto back = DecodeBase64(EncodeBase64(all));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, all);
}

}  // namespace
}  // namespace kc
