#include "initwarm/flags.h"

#include <gtest/gtest.h>

namespace kc::initwarm {
namespace {

Flags Make() {
  Flags f("x", "test");
  f.String("root", "/var/cache/kernelcache", "root");
  f.Bool("dry-run", "dry");
  f.Repeated("keep", "keep");
  f.String("timeout", "15m", "timeout");
  return f;
}

TEST(Flags, ParsesForms) {
  Flags f = Make();
  ASSERT_TRUE(f.Parse({"--root", "/a", "--dry-run", "--keep=a,b", "--keep", "c"}).ok());
  EXPECT_EQ(f.Get("root"), "/a");
  EXPECT_TRUE(f.GetBool("dry-run"));
  EXPECT_EQ(f.GetAll("keep"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(*f.GetSeconds("timeout"), 900);
}

TEST(Flags, Errors) {
  Flags f = Make();
  EXPECT_FALSE(f.Parse({"--nope"}).ok());
  Flags g = Make();
  EXPECT_FALSE(g.Parse({"positional"}).ok());
  Flags h = Make();
  EXPECT_FALSE(h.Parse({"--root"}).ok());
  Flags i = Make();
  ASSERT_TRUE(i.Parse({"--help"}).ok());
  EXPECT_TRUE(i.help_requested());
  EXPECT_NE(i.Help().find("--keep"), std::string::npos);
}

TEST(Flags, Seconds) {
  EXPECT_EQ(*ParseSeconds("90"), 90);
  EXPECT_EQ(*ParseSeconds("90s"), 90);
  EXPECT_EQ(*ParseSeconds("5m"), 300);
  EXPECT_EQ(*ParseSeconds("2h"), 7200);
  EXPECT_EQ(*ParseSeconds("1d"), 86400);
  EXPECT_FALSE(ParseSeconds("").ok());
  EXPECT_FALSE(ParseSeconds("m").ok());
  EXPECT_FALSE(ParseSeconds("-5s").ok());
  EXPECT_FALSE(ParseSeconds("1.5h").ok());
}

}  // namespace
}  // namespace kc::initwarm
