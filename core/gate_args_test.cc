#include "core/gate_args.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

GateArgs Args() {
  GateArgs a;
  a.root = "/var/cache/kernelcache";
  a.view = "/var/run/kernelcache/view";
  a.mode = ConsumeMode::kCopy;
  a.verify = Level::kChecksums;
  a.timeout_seconds = 600;
  a.on_timeout = OnTimeout::kStartCold;
  a.kernelcache = "llama";
  a.ns = EnvRef(gate_env::kNamespace);
  a.node = EnvRef(gate_env::kNodeName);
  return a;
}

TEST(GateArgs, EncodesEveryFieldAsAFlag) {
  struct Case {
    std::string name;
    GateArgs args;
    std::vector<std::string> want;
  };
  GateArgs with_url = Args();
  with_url.resolve_url = "http://kc-operator.kc-system.svc:8080";
  const std::vector<std::string> base = {"wait",
                                         "--root=/var/cache/kernelcache",
                                         "--view=/var/run/kernelcache/view",
                                         "--mode=Copy",
                                         "--verify=Checksums",
                                         "--timeout=600s",
                                         "--on-timeout=StartCold",
                                         "--kernelcache=llama",
                                         "--namespace=$(KC_NAMESPACE)",
                                         "--node=$(KC_NODE_NAME)"};
  std::vector<std::string> base_with_url = base;
  base_with_url.push_back("--resolve-url=http://kc-operator.kc-system.svc:8080");
  const std::vector<Case> cases = {
      {"no resolve URL: no flag", Args(), base},
      {"resolve URL", with_url, base_with_url},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GateArgv(c.args), c.want) << c.name;
  }
}

// What the webhook encodes, initwarm decodes to the same arguments.
TEST(GateArgs, DecodingTheEncodingGivesTheArgumentsBack) {
  std::vector<std::pair<std::string, GateArgs>> cases = {{"defaults", GateArgs{}},
                                                         {"webhook's", Args()}};
  for (ConsumeMode m : {ConsumeMode::kCopy, ConsumeMode::kShared, ConsumeMode::kSharedReadWrite}) {
    GateArgs a = Args();
    a.mode = m;
    cases.emplace_back(std::string(ConsumeModeName(m)), a);
  }
  for (Level l : {Level::kManifest, Level::kFingerprint, Level::kChecksums, Level::kTargetArch,
                  Level::kLoadTest}) {
    GateArgs a = Args();
    a.verify = l;
    cases.emplace_back(std::string(LevelName(l)), a);
  }
  for (OnTimeout t : {OnTimeout::kFail, OnTimeout::kStartCold}) {
    GateArgs a = Args();
    a.on_timeout = t;
    cases.emplace_back(std::string(OnTimeoutName(t)), a);
  }
  GateArgs odd = Args();
  odd.timeout_seconds = 1;
  odd.root = "/mnt/with=equals";  // only the first '=' separates
  odd.kernelcache = "";
  odd.resolve_url = "http://[fd00::1]:8080/kc";
  cases.emplace_back("odd values", odd);
  GateArgs day = Args();
  day.timeout_seconds = 86400;
  cases.emplace_back("a day", day);
  for (const auto& [name, args] : cases) {
    auto back = ParseGateArgv(GateArgv(args));
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    EXPECT_EQ(*back, args) << name;
  }
}

TEST(GateArgs, AbsentFlagsKeepTheDefaultsOfInitwarmWait) {
  auto a = DecodeGateFlags({{gate_flag::kKernelCache, "llama"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->mode, ConsumeMode::kCopy);  // the API's default, not Shared
  EXPECT_EQ(a->verify, Level::kManifest);
  EXPECT_EQ(a->timeout_seconds, 900);
  EXPECT_EQ(a->on_timeout, OnTimeout::kFail);
  EXPECT_EQ(a->root, "/var/cache/kernelcache");
  EXPECT_EQ(a->view, "/var/run/kernelcache/view");
  EXPECT_EQ(a->kernelcache, "llama");
  // initwarm's durations: bare seconds and minutes too.
  a = DecodeGateFlags({{gate_flag::kTimeout, "10m"}, {gate_flag::kVerify, "loadtest"}});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->timeout_seconds, 600);
  EXPECT_EQ(a->verify, Level::kLoadTest);
}

TEST(GateArgs, DecodingErrorsNameTheArgument) {
  struct Case {
    std::vector<std::string> argv;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{}, "must start with \"wait\""},
      {{"seal", "--mode=Copy"}, "must start with \"wait\""},
      {{"wait", "--mode=Link"}, "--mode: \"Link\" is not one of Copy, Shared, SharedReadWrite"},
      {{"wait", "--mode=copy"}, "--mode: \"copy\""},
      {{"wait", "--verify=All"}, "--verify: \"All\" is not one of Manifest,"},
      {{"wait", "--on-timeout=Retry"}, "--on-timeout: \"Retry\" is not one of Fail, StartCold"},
      {{"wait", "--timeout=soon"}, "--timeout: malformed duration \"soon\""},
      {{"wait", "--timeout=999999999999d"}, "--timeout: duration"},
      {{"wait", "--timeout=-5s"}, "--timeout:"},
      {{"wait", "--color=blue"}, "--color is not a flag of initwarm wait"},
      {{"wait", "--mode=Copy", "--mode=Shared"}, "--mode is given twice"},
      {{"wait", "--mode", "Copy"}, "gate argument \"--mode\" is not --<flag>=<value>"},
      {{"wait", "mode=Copy"}, "gate argument \"mode=Copy\" is not --<flag>=<value>"},
      {{"wait", "--=x"}, "gate argument \"--=x\""},
  };
  for (const Case& c : cases) {
    auto a = ParseGateArgv(c.argv);
    ASSERT_FALSE(a.ok()) << c.want;
    EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument) << c.want;
    EXPECT_NE(a.status().message().find(c.want), std::string::npos) << a.status();
  }
}

TEST(GateArgs, EnvRefIsAKubeletReference) {
  EXPECT_EQ(EnvRef(gate_env::kNodeName), "$(KC_NODE_NAME)");
}

}  // namespace
}  // namespace kc::core
