#include "base/flags.h"

#include <gtest/gtest.h>

#include <map>

namespace kc {
namespace {

// The flags of a small command, bound to its variables.
struct Vars {
  std::string root = "/var/cache/kernelcache";
  bool dry_run = false;
  std::vector<std::string> keep;
  std::chrono::seconds timeout{900};
  int threads = 0;
  std::optional<int> port;
  std::vector<std::string> names;

  void Declare(FlagSet& f) {
    f.String("root", &root, "root").Env("KC_ROOT");
    f.Bool("dry-run", &dry_run, "dry");
    f.List("keep", &keep, "keep").Repeatable();
    f.Duration("timeout", &timeout, kInitwarmDurations, "timeout").Env("KC_TIMEOUT");
    f.Int("threads", &threads, 0, 1024, "threads");
    f.Int("port", &port, 0, 65535, "port").DefaultText("--http-port");
    f.List("names", &names, "names");
  }
};

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

Status Parse(Vars& v, const std::vector<std::string>& args, const EnvLookup& env = Env({})) {
  FlagSet f("usage: x [flags]", "test");
  v.Declare(f);
  return f.Parse(args, env);
}

TEST(Flags, ParsesForms) {
  Vars v;
  FlagSet f("usage: x [flags]", "test");
  v.Declare(f);
  ASSERT_TRUE(
      f.Parse({"--root", "/a", "--dry-run", "--keep=a,b", "--keep", "c", "--threads=4"}, Env({}))
          .ok());
  EXPECT_EQ(v.root, "/a");
  EXPECT_TRUE(v.dry_run);
  EXPECT_EQ(v.keep, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(v.timeout.count(), 900);
  EXPECT_EQ(v.threads, 4);
  EXPECT_FALSE(v.port.has_value());
  EXPECT_TRUE(f.IsSet("root"));
  EXPECT_FALSE(f.IsSet("timeout"));

  struct Case {
    std::vector<std::string> args;
    std::function<bool(const Vars&)> check;
  } cases[] = {
      {{"--dry-run=false"}, [](const Vars& v) { return !v.dry_run; }},
      {{"--dry-run", "no"}, [](const Vars& v) { return !v.dry_run; }},
      {{"--dry-run", "--threads=2"}, [](const Vars& v) { return v.dry_run && v.threads == 2; }},
      {{"--timeout", "1h30m"}, [](const Vars& v) { return v.timeout.count() == 5400; }},
      {{"--timeout=2d"}, [](const Vars& v) { return v.timeout.count() == 172800; }},
      {{"--threads", " 7 "}, [](const Vars& v) { return v.threads == 7; }},
      {{"--port=0"}, [](const Vars& v) { return v.port == 0; }},
      {{"--names", "a, b,,c "},
       [](const Vars& v) {
         return v.names == std::vector<std::string>{"a", "b", "c"};
       }},
      // Not repeatable: the last occurrence wins.
      {{"--names=a", "--names=b"},
       [](const Vars& v) { return v.names == std::vector<std::string>{"b"}; }},
  };
  for (const auto& c : cases) {
    Vars w;
    Status s = Parse(w, c.args);
    ASSERT_TRUE(s.ok()) << c.args[0] << ": " << s;
    EXPECT_TRUE(c.check(w)) << c.args[0];
  }
}

// Default < environment < command line; an empty variable is unset.
TEST(Flags, EnvironmentBetweenDefaultAndCommandLine) {
  Vars v;
  ASSERT_TRUE(Parse(v, {}, Env({{"KC_ROOT", "/env"}, {"KC_TIMEOUT", "5m"}})).ok());
  EXPECT_EQ(v.root, "/env");
  EXPECT_EQ(v.timeout.count(), 300);
  Vars w;
  ASSERT_TRUE(Parse(w, {"--root=/flag"}, Env({{"KC_ROOT", "/env"}, {"KC_TIMEOUT", ""}})).ok());
  EXPECT_EQ(w.root, "/flag");
  EXPECT_EQ(w.timeout.count(), 900);
  Vars x;
  Status bad = Parse(x, {}, Env({{"KC_TIMEOUT", "soon"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("--timeout (from $KC_TIMEOUT): \"soon\" is not a duration"),
            std::string::npos)
      << bad;
}

TEST(Flags, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } cases[] = {
      {{"--nope"}, "unknown flag --nope (see --help)"},
      {{"positional"}, "unexpected argument \"positional\": flags look like --name=value"},
      {{"-x"}, "unexpected argument \"-x\""},
      {{"--"}, "unexpected argument \"--\""},
      {{"--root"}, "--root: missing value"},
      {{"--dry-run=maybe"}, "--dry-run: \"maybe\" is not a boolean (use true or false)"},
      {{"--threads=2000"}, "--threads: 2000 is out of range 0..1024"},
      {{"--threads=abc"}, "--threads: \"abc\" is not an integer"},
      {{"--port=70000"}, "--port: 70000 is out of range 0..65535"},
      {{"--timeout=soon"}, "--timeout: \"soon\" is not a duration (want e.g. 90, 45s"},
      {{"--timeout=999999999h"}, "--timeout: duration \"999999999h\" is too long: at most 366d"},
  };
  for (const auto& c : cases) {
    Vars v;
    Status s = Parse(v, c.args);
    ASSERT_FALSE(s.ok()) << c.args[0];
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.args[0];
    EXPECT_NE(s.message().find(c.want), std::string::npos) << c.args[0] << ": " << s.message();
  }
}

// --help is a request, not an error; nothing after it is read.
TEST(Flags, Help) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"--threads=3", "--help"}, {"--help", "--threads=-1", "--nope"}}) {
    Vars v;
    FlagSet f("usage: x [flags]", "A test command.");
    v.Declare(f);
    Status s = f.Parse(args, Env({}));
    ASSERT_TRUE(s.ok()) << args[0] << ": " << s;
    EXPECT_TRUE(f.help_requested()) << args[0];
    EXPECT_EQ(v.threads, 0) << "help stops before any value is set";
  }
  Vars v;
  FlagSet f("usage: x [flags]", "A test command.");
  v.Declare(f);
  const std::string h = f.Help();
  for (const char* want :
       {"usage: x [flags]\n\nA test command.\n\nflags:\n",
        "  --root=VALUE\n      root (default /var/cache/kernelcache) [env KC_ROOT]\n",
        "  --dry-run[=BOOL]\n      dry\n", "  --keep=VALUE[,VALUE...]\n      keep (repeatable)\n",
        "  --timeout=VALUE\n      timeout (default 15m) [env KC_TIMEOUT]\n",
        "  --threads=VALUE\n      threads (default 0; 0..1024)\n",
        "  --port=VALUE\n      port (default --http-port; 0..65535)\n"}) {
    EXPECT_NE(h.find(want), std::string::npos) << want << "\n---\n" << h;
  }
}

// A config file's keys go through the same declarations.
TEST(Flags, SetByName) {
  Vars v;
  FlagSet f("usage: x [flags]");
  v.Declare(f);
  ASSERT_NE(f.Find("keep"), nullptr);
  EXPECT_EQ(f.Find("keep")->kind(), FlagSet::Kind::kList);
  EXPECT_EQ(f.Find("nope"), nullptr);
  ASSERT_TRUE(f.Set("threads", "9").ok());
  EXPECT_EQ(v.threads, 9);
  EXPECT_FALSE(f.IsSet("threads")) << "set by name, not on the command line";
  EXPECT_EQ(f.Set("threads", "x").message(), "--threads: \"x\" is not an integer");
  EXPECT_EQ(f.Set("nope", "1").code(), StatusCode::kNotFound);
}

// Hostile values are errors naming the flag, never an overflow: initwarm
// wait multiplies --poll-initial by 1000 and adds --timeout to a clock, so
// "999999999999d" (8.6e16 s) overflowed int64 there.
TEST(Flags, HostileValues) {
  const std::string huge(400, '9');
  for (const std::string& s :
       std::vector<std::string>{"999999999999d", "9999999999999", huge + "s", "367d", "9000h", "-1",
                                "1e9", "5\xC3\xBC", "0x10"}) {
    Vars v;
    Status st = Parse(v, {"--timeout", s});
    ASSERT_FALSE(st.ok()) << s.substr(0, 40);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(st.message().find("--timeout"), std::string::npos) << st;
    EXPECT_LT(st.message().size(), 200u);
  }
  Vars v;
  Status d = Parse(v, {"--timeout", "99999999999d"});
  EXPECT_NE(d.message().find("too long"), std::string::npos) << d;
  for (const std::string& arg :
       std::vector<std::string>{"--threads=99999999999999999999", "--threads=" + huge,
                                "--port=" + huge, "--dry-run=" + huge, "--" + huge}) {
    Vars w;
    Status t = Parse(w, {arg});
    ASSERT_FALSE(t.ok()) << arg.substr(0, 40);
    EXPECT_LT(t.message().size(), 200u) << t;
  }
  Vars w;
  EXPECT_NE(Parse(w, {"--threads", "99999999999999999999"}).message().find("--threads"),
            std::string::npos);
}

}  // namespace
}  // namespace kc
