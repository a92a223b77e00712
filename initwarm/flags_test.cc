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
  EXPECT_EQ(*ParseSeconds("366d"), kMaxFlagSeconds);
}

// Hostile values are errors naming the problem, never an overflow: cmd_wait
// multiplies --poll-initial by 1000 and adds --timeout to a clock, so
// "999999999999d" (8.6e16 s) overflowed int64 there.
TEST(Flags, HostileValues) {
  for (const std::string& s :
       std::vector<std::string>{"999999999999d", "9999999999999", std::string(400, '9') + "s",
                                "367d", "9000h", "-1", "1e9", "5\xC3\xBC", "0x10", " 5"}) {
    auto v = ParseSeconds(s);
    ASSERT_FALSE(v.ok()) << s.substr(0, 40);
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_LT(v.status().message().size(), 200u);
  }
  EXPECT_NE(ParseSeconds("999999999999d").status().message().find("too long"), std::string::npos);
  Flags f("x", "test");
  f.String("threads", "0", "threads");
  f.String("timeout", "15m", "timeout");
  ASSERT_TRUE(f.Parse({"--threads", "99999999999999999999", "--timeout", "99999999999d"}).ok());
  auto t = f.GetInt("threads", 0, 1024);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("--threads"), std::string::npos) << t.status();
  auto d = f.GetSeconds("timeout");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("--timeout"), std::string::npos) << d.status();
  Flags g("x", "test");
  g.String("threads", "0", "threads");
  ASSERT_TRUE(g.Parse({"--threads=abc"}).ok());
  EXPECT_EQ(g.GetInt("threads", 0, 1024).status().message(),
            "--threads: \"abc\" is not an integer");
}

}  // namespace
}  // namespace kc::initwarm
