#include "operator/config.h"

#include <gtest/gtest.h>

#include <map>

namespace kc::op {
namespace {

struct Fixture {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> env;
  StatusOr<Config> Parse(const std::vector<std::string>& args) const {
    return ParseConfig(
        args,
        [this](const std::string& p) -> StatusOr<std::string> {
          auto it = files.find(p);
          if (it == files.end()) return NotFoundError("no such file " + p);
          return it->second;
        },
        [this](const std::string& n) -> std::optional<std::string> {
          auto it = env.find(n);
          if (it == env.end()) return std::nullopt;
          return it->second;
        });
  }
};

TEST(ConfigTest, Defaults) {
  Fixture f;
  f.env["POD_NAME"] = "op-0";
  auto c = f.Parse({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->workers, 4);
  EXPECT_TRUE(c->leader_elect);
  EXPECT_EQ(c->lease_name, "kernelcache-operator");
  EXPECT_EQ(c->identity, "op-0");
  EXPECT_TRUE(c->namespaces.empty());
  EXPECT_EQ(c->log_format, "json");
  EXPECT_EQ(c->Listeners().size(), 1u);
  EXPECT_EQ(c->Listeners().at(8080).size(), 4u);
  EXPECT_EQ(c->MissesPort(), 8080);
  EXPECT_EQ(c->MissesUrl(), c->ResolveUrl());
  EXPECT_EQ(c->miss_watcher_uid, 65533);
}

// The miss channel on a port of its own: its own listener, and the URL the
// watchers get names that port on the resolve Service (or --misses-url).
TEST(ConfigTest, MissesPortAndUrl) {
  Fixture f;
  auto c = f.Parse({"--misses-port=8081", "--webhook-namespace=kc", "--miss-watcher-uid=70000"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->Listeners().at(8081), (std::set<std::string>{"misses"}));
  EXPECT_EQ(c->Listeners().at(8080), (std::set<std::string>{"metrics", "health", "resolve"}));
  EXPECT_EQ(c->MissesUrl(), "http://kernelcache-operator.kc.svc:8081");
  EXPECT_EQ(c->miss_watcher_uid, 70000);
  auto url = f.Parse({"--misses-port=8081", "--misses-url=http://10.0.0.7:31081"});
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->MissesUrl(), "http://10.0.0.7:31081");
  // A pinned resolve address (no cluster DNS): the same host at the port.
  auto pinned = f.Parse({"--misses-port=8081", "--resolve-url=http://10.96.0.50"});
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->MissesUrl(), "http://10.96.0.50:8081");
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } bad[] = {
      {{"--misses-url=ftp://x"}, "--misses-url"},
      {{"--miss-watcher-uid=0"}, "--miss-watcher-uid"},
      {{"--misses-port=70000"}, "--misses-port"},
      {{"--webhook-port=8081", "--misses-port=8081"}, "is also an HTTP port"},
  };
  for (const Case& b : bad) {
    auto r = f.Parse(b.args);
    ASSERT_FALSE(r.ok()) << b.args[0];
    EXPECT_NE(r.status().message().find(b.want), std::string::npos) << r.status();
  }
}

TEST(ConfigTest, FlagsOverrideFile) {
  Fixture f;
  f.files["/etc/op.yaml"] =
      "workers: 4\n"
      "namespaces: [team-a, team-b]\n"
      "leader-elect: false\n"
      "metrics-port: 9090\n"
      "initwarm-image: reg/initwarm:1\n";
  auto c = f.Parse({"--config=/etc/op.yaml", "--workers", "8", "--resolve-port=9091"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->workers, 8);  // flag wins
  EXPECT_EQ(c->namespaces, (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_FALSE(c->leader_elect);
  EXPECT_EQ(c->MetricsPort(), 9090);
  EXPECT_EQ(c->ResolvePort(), 9091);
  EXPECT_EQ(c->HealthPort(), 8080);
  EXPECT_EQ(c->initwarm_image, "reg/initwarm:1");
  auto listeners = c->Listeners();
  ASSERT_EQ(listeners.size(), 3u);
  EXPECT_EQ(listeners.at(9090), (std::set<std::string>{"metrics"}));
}

TEST(ConfigTest, GoodFlagForms) {
  struct Case {
    std::vector<std::string> args;
    std::function<bool(const Config&)> check;
  } cases[] = {
      {{"--leader-elect"}, [](const Config& c) { return c.leader_elect; }},
      {{"--leader-elect=false"}, [](const Config& c) { return !c.leader_elect; }},
      {{"--leader-elect", "false"}, [](const Config& c) { return !c.leader_elect; }},
      {{"--namespaces=all"}, [](const Config& c) { return c.namespaces.empty(); }},
      {{"--namespaces", "a, b"},
       [](const Config& c) {
         return c.namespaces == std::vector<std::string>{"a", "b"};
       }},
      {{"--lease-duration=1m", "--renew-deadline=40s", "--retry-period=5"},
       [](const Config& c) {
         return c.lease_duration.count() == 60 && c.retry_period.count() == 5;
       }},
      {{"--warmup-retry-base=1h30m", "--warmup-retry-cap=2h"},
       [](const Config& c) { return c.retry_base.count() == 5400; }},
      {{"--http-port=0"}, [](const Config& c) { return c.http_port == 0; }},
      {{"--log-format=text", "--log-level=debug"},
       [](const Config& c) { return c.log_format == "text" && c.log_level == "debug"; }},
      {{"--identity=me"}, [](const Config& c) { return c.identity == "me"; }},
  };
  Fixture f;
  for (const auto& tc : cases) {
    auto c = f.Parse(tc.args);
    ASSERT_TRUE(c.ok()) << tc.args[0] << ": " << c.status();
    EXPECT_TRUE(tc.check(*c)) << tc.args[0];
  }
}

TEST(ConfigTest, WebhookFlags) {
  Fixture f;
  auto off = f.Parse({});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(off->webhook_port, 0);
  EXPECT_EQ(off->webhook_cert_secret, "kernelcache-webhook-tls");
  EXPECT_EQ(off->webhook_cert_lifetime, std::chrono::hours(24 * 90));
  EXPECT_EQ(off->webhook_ca_lifetime, std::chrono::hours(24 * 3650));
  EXPECT_EQ(off->ResolveUrl(), "http://kernelcache-operator.kernelcache-system.svc");
  auto on = f.Parse({"--webhook-port=9443", "--webhook-namespace=kc",
                     "--webhook-cert-ips=127.0.0.1, ::1", "--webhook-cert-lifetime=1h",
                     "--webhook-cert-secret-external", "--resolve-service-name=op"});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(on->webhook_port, 9443);
  EXPECT_EQ(on->webhook_cert_ips, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(on->webhook_cert_lifetime, std::chrono::hours(1));
  EXPECT_TRUE(on->webhook_cert_secret_external);
  EXPECT_EQ(on->ResolveUrl(), "http://op.kc.svc");
  struct Case {
    std::vector<std::string> args;
    std::string want;
  } bad[] = {
      {{"--webhook-port=8080"}, "is also an HTTP port"},
      {{"--webhook-port=9443", "--webhook-namespace=Bad_NS"}, "--webhook-namespace"},
      {{"--webhook-port=9443", "--webhook-cert-lifetime=10s"}, "at least 30s"},
      {{"--webhook-port=9443", "--webhook-cert-lifetime=20h", "--webhook-ca-lifetime=10h"},
       "not above --webhook-ca-lifetime"},
      {{"--webhook-port=9443", "--webhook-cert-check-interval=0"}, "must be positive"},
  };
  for (const auto& c : bad) {
    auto r = f.Parse(c.args);
    ASSERT_FALSE(r.ok()) << c.args[0];
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status();
  }
}

TEST(ConfigTest, BadConfigNamesTheProblem) {
  struct Case {
    std::vector<std::string> args;
    std::string file;
    std::string want;  // substring of the message
  } cases[] = {
      {{"--workers=0"}, "", "--workers: 0 is out of range 1..64"},
      {{"--workers=many"}, "", "--workers: \"many\" is not an integer"},
      {{"--nope=1"}, "", "unknown flag --nope"},
      {{"stray"}, "", "unexpected argument \"stray\""},
      {{"--kubeconfig"}, "", "--kubeconfig: missing value"},
      {{"--http-port=70000"}, "", "--http-port: 70000 is out of range 0..65535"},
      {{"--metrics-port=-1"}, "", "--metrics-port: -1 is out of range"},
      {{"--log-format=xml"}, "", "--log-format: \"xml\" is not one of json, text"},
      {{"--log-level=loud"}, "", "--log-level"},
      {{"--namespaces=Team_A"}, "", "--namespaces: \"Team_A\" is not a valid namespace name"},
      {{"--leader-elect=maybe"}, "", "--leader-elect: \"maybe\" is not a boolean"},
      {{"--lease-duration=10s", "--renew-deadline=10s"},
       "",
       "--renew-deadline (10s) must be shorter"},
      {{"--lease-duration=ten"}, "", "--lease-duration: \"ten\" is not a duration"},
      {{"--leader-election-id=Bad_Name"}, "", "--leader-election-id"},
      {{"--in-cluster", "--kubeconfig=/k"}, "", "exclude each other"},
      {{"--image-pull-policy=Sometimes"}, "", "--image-pull-policy"},
      {{"--initwarm-image="}, "", "--initwarm-image: empty"},
      {{"--resolve-url=https://kc.example"},
       "",
       "--resolve-url: resolve URL \"https://kc.example\" must start with http://"},
      {{"--resolve-url=http://"}, "", "--resolve-url: resolve URL \"http://\" has no host or port"},
      {{"--resolve-url=http://10.96.0.9:http"}, "", "port \"http\" is not a number in 1..65535"},
      {{"--warmup-retry-base=2h", "--warmup-retry-cap=1h"}, "", "--warmup-retry-base"},
      {{"--config=/missing.yaml"}, "", "--config: cannot read /missing.yaml"},
      {{"--config=/c.yaml"}, "workers: [1, 2]\n", "key \"workers\" takes a single value"},
      {{"--config=/c.yaml"}, "wrokers: 3\n", "unknown key \"wrokers\""},
      {{"--config=/c.yaml"}, "- a\n- b\n", "expected a mapping"},
      {{"--config=/c.yaml"}, "workers: [\n", "not valid YAML"},
      {{"--config=/c.yaml"}, "workers: 99\n", "config file /c.yaml: --workers: 99 is out of range"},
  };
  for (const auto& tc : cases) {
    Fixture f;
    if (!tc.file.empty()) f.files["/c.yaml"] = tc.file;
    auto c = f.Parse(tc.args);
    ASSERT_FALSE(c.ok()) << tc.args[0];
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << tc.args[0];
    EXPECT_NE(c.status().message().find(tc.want), std::string::npos)
        << "args " << tc.args[0] << ": got \"" << c.status().message() << "\", want \"" << tc.want
        << "\"";
  }
}

// --help is a request, not an error (it was returned as NotFound).
TEST(ConfigTest, HelpIsNotAnError) {
  Fixture f;
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--help"}, {"-h"}, {"--workers=3", "--help"}, {"--help", "--workers=0"}}) {
    auto c = f.Parse(args);
    ASSERT_TRUE(c.ok()) << args[0] << ": " << c.status();
    EXPECT_TRUE(c->help);
  }
  EXPECT_FALSE(f.Parse({"--workers=3"})->help);
  EXPECT_NE(Usage().find("--leader-elect"), std::string::npos);
}

// Hostile flag values: each is an InvalidArgument naming the flag, never an
// exception (std::stoll threw out_of_range on a long number) and never a
// value that overflows the clock later.
TEST(ConfigTest, HostileValuesAreErrorsNamingTheFlag) {
  const std::string huge(400, '9');
  struct Case {
    std::string arg;
    std::string want;
  } cases[] = {
      {"--lease-duration=" + huge + "s", "--lease-duration: duration"},
      {"--lease-duration=" + huge, "--lease-duration: " + huge.substr(0, 64)},
      {"--renew-deadline=99999999999999999999h", "--renew-deadline"},
      {"--retry-period=999999999h", "too long"},
      {"--warmup-retry-cap=1e400", "--warmup-retry-cap: \"1e400\" is not a duration"},
      {"--resync-period=-5s", "--resync-period: \"-5s\" is not a duration"},
      {"--pvc-binding-grace=5\xC3\xBCm", "--pvc-binding-grace"},
      {"--workers=" + huge, "--workers: " + huge.substr(0, 64)},
      {"--workers=-99999999999999999999", "--workers"},
      {"--http-port=99999999999999999999", "--http-port"},
      {"--metrics-port=0x50", "--metrics-port: \"0x50\" is not an integer"},
      {"--workers=", "--workers: \"\" is not an integer"},
      {"--leader-elect=" + huge, "--leader-elect"},
  };
  for (const auto& tc : cases) {
    Fixture f;
    StatusOr<Config> c = InternalError("not run");
    EXPECT_NO_THROW(c = f.Parse({tc.arg})) << tc.arg.substr(0, 80);
    ASSERT_FALSE(c.ok()) << tc.arg.substr(0, 80);
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument) << tc.arg.substr(0, 80);
    EXPECT_NE(c.status().message().find(tc.want), std::string::npos)
        << tc.arg.substr(0, 80) << ": " << c.status().message();
    EXPECT_LT(c.status().message().size(), 400u) << "a hostile value is quoted, bounded";
  }
}

// Warmup scheduling: the defaults are stated once in
// config.h and the help text shows them.
TEST(ConfigTest, WarmupPriorityClassAndUnschedulableGrace) {
  Fixture f;
  auto c = f.Parse({});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->warmup_priority_class, kDefaultWarmupPriorityClass);
  EXPECT_EQ(c->warmup_priority_class, "kernelcache-warmup");
  EXPECT_EQ(c->warmup_unschedulable_grace, kDefaultWarmupUnschedulableGrace);
  const std::string usage = Usage();
  EXPECT_NE(usage.find("--warmup-priority-class=VALUE"), std::string::npos) << usage;
  EXPECT_NE(usage.find("(default kernelcache-warmup, which the chart creates)"), std::string::npos)
      << usage;
  EXPECT_NE(usage.find("StartCold pods start cold at once (default 2m)"), std::string::npos)
      << usage;

  c = f.Parse({"--warmup-priority-class=", "--warmup-unschedulable-grace=45s"});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->warmup_priority_class, "");
  EXPECT_EQ(c->warmup_unschedulable_grace, std::chrono::seconds(45));

  for (const auto& [flag, want] : std::vector<std::pair<std::string, std::string>>{
           {"--warmup-priority-class=High_Prio", "--warmup-priority-class"},
           {"--warmup-unschedulable-grace=0s", "--warmup-unschedulable-grace"},
           {"--warmup-unschedulable-grace=2d", "--warmup-unschedulable-grace"}}) {
    auto bad = f.Parse({flag});
    ASSERT_FALSE(bad.ok()) << flag;
    EXPECT_NE(bad.status().message().find(want), std::string::npos) << bad.status();
  }
}

}  // namespace
}  // namespace kc::op
