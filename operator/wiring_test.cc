#include "operator/wiring.h"

#include <gtest/gtest.h>

#include <sstream>

#include "kube/testing/fake_client.h"
#include "operator/testing/http_get.h"

namespace kc::op {
namespace {

using namespace std::chrono_literals;

TEST(WiringTest, SettingsDefaultsAreDecidesOwn) {
  const Settings from_flags = SettingsFrom(Config{});
  const Settings decide;
  EXPECT_EQ(from_flags.initwarm_image, decide.initwarm_image);
  EXPECT_EQ(from_flags.image_pull_policy, decide.image_pull_policy);
  EXPECT_EQ(from_flags.pvc_binding_grace, decide.pvc_binding_grace);
  EXPECT_EQ(from_flags.retry_base, decide.retry_base);
  EXPECT_EQ(from_flags.retry_cap, decide.retry_cap);
  EXPECT_EQ(from_flags.unschedulable_grace, decide.unschedulable_grace);
  // The program's own default: the chart's PriorityClass.
  EXPECT_EQ(from_flags.warmup_priority_class, kDefaultWarmupPriorityClass);
  EXPECT_EQ(decide.warmup_priority_class, "");
}

TEST(WiringTest, ControllerOptionsCarryTheFlags) {
  Config c;
  c.namespaces = {"a", "b"};
  c.workers = 7;
  c.resync_period = 42s;
  c.identity = "op-1";
  c.initwarm_image = "registry.example/initwarm:1";
  c.image_pull_policy = "Always";
  c.warmup_service_account = "warmer";
  c.pvc_binding_grace = 5s;
  c.retry_base = 6s;
  c.retry_cap = 60s;
  c.warmup_priority_class = "";
  c.warmup_unschedulable_grace = 9s;
  kube::FakeClient events;
  const ControllerOptions o = ControllerOptionsFrom(c, &events);
  EXPECT_EQ(o.namespaces, c.namespaces);
  EXPECT_EQ(o.workers, 7);
  EXPECT_EQ(o.resync_period, 42s);
  EXPECT_EQ(o.identity, "op-1");
  EXPECT_EQ(o.events_client, &events);
  EXPECT_EQ(o.settings.initwarm_image, "registry.example/initwarm:1");
  EXPECT_EQ(o.settings.image_pull_policy, "Always");
  EXPECT_EQ(o.settings.service_account, "warmer");
  EXPECT_EQ(o.settings.pvc_binding_grace, 5s);
  EXPECT_EQ(o.settings.retry_base, 6s);
  EXPECT_EQ(o.settings.retry_cap, 60s);
  EXPECT_EQ(o.settings.warmup_priority_class, "");
  EXPECT_EQ(o.settings.unschedulable_grace, 9s);
}

TEST(WiringTest, InjectSettingsNameTheResolveServiceUnlessGiven) {
  Config c;
  c.initwarm_image = "registry.example/initwarm:1";
  c.webhook_namespace = "kc-system";
  webhook::InjectSettings s = InjectSettingsFrom(c);
  EXPECT_EQ(s.initwarm_image, "registry.example/initwarm:1");
  EXPECT_EQ(s.resolve_url, "http://kernelcache-operator.kc-system.svc");
  EXPECT_EQ(s.operator_namespace, "kc-system");
  c.resolve_url = "http://10.0.0.1:8080";
  EXPECT_EQ(InjectSettingsFrom(c).resolve_url, "http://10.0.0.1:8080");
}

TEST(WiringTest, CertControllerOptionsCarryTheFlags) {
  Config c;
  c.webhook_namespace = "kc-system";
  c.webhook_cert_secret = "tls";
  c.webhook_service_name = "hook";
  c.webhook_cert_ips = {"127.0.0.1"};
  c.webhook_mutating_config = "m";
  c.webhook_validating_config = "v";
  c.webhook_ca_lifetime = 100s;
  c.webhook_cert_lifetime = 50s;
  c.webhook_cert_secret_external = true;
  c.webhook_cert_check_interval = 3s;
  const webhook::CertControllerOptions o = CertControllerOptionsFrom(c);
  EXPECT_EQ(o.ns, "kc-system");
  EXPECT_EQ(o.secret_name, "tls");
  EXPECT_EQ(o.service_name, "hook");
  EXPECT_EQ(o.ips, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(o.mutating_config, "m");
  EXPECT_EQ(o.validating_config, "v");
  EXPECT_EQ(o.ca_lifetime, 100s);
  EXPECT_EQ(o.serving_lifetime, 50s);
  EXPECT_TRUE(o.external);
  EXPECT_EQ(o.interval, 3s);
}

TEST(WiringTest, LeaderElectionFromTheFlagsIsValid) {
  Config c;
  c.identity = "op-0";
  c.lease_duration = 20s;
  c.renew_deadline = 12s;
  c.retry_period = 3s;
  const kube::LeaderElectionConfig le = LeaderElectionFrom(c);
  EXPECT_EQ(le.lease_namespace, "kernelcache-system");
  EXPECT_EQ(le.lease_name, "kernelcache-operator");
  EXPECT_EQ(le.identity, "op-0");
  EXPECT_EQ(le.lease_duration, 20s);
  EXPECT_EQ(le.renew_deadline, 12s);
  EXPECT_EQ(le.retry_period, 3s);
  EXPECT_TRUE(le.release_on_cancel);
  EXPECT_TRUE(kube::ValidateLeaderElectionConfig(le).ok());
}

TEST(WiringTest, Readyz) {
  struct Case {
    const char* name;
    bool synced;
    std::optional<webhook::Readiness> certs;
    int status;
    std::string body;
  };
  const Case cases[] = {
      {"caches not synced", false, std::nullopt, 503, "informer caches not synced"},
      {"not synced wins over the certificate", false, webhook::Readiness{false, "no cert"}, 503,
       "informer caches not synced"},
      {"synced, webhooks off", true, std::nullopt, 200, "ok"},
      {"synced, certificate not trusted", true, webhook::Readiness{false, "not in caBundle"}, 503,
       "webhook: not in caBundle"},
      {"synced, certificate trusted", true, webhook::Readiness{true, ""}, 200, "ok"},
  };
  for (const Case& t : cases) {
    const HttpResponse r = ReadyzResponse(t.synced, t.certs);
    EXPECT_EQ(r.status, t.status) << t.name;
    EXPECT_EQ(r.body, t.body) << t.name;
  }
}

TEST(WiringTest, ListenerServesOnlyItsGroups) {
  kube::FakeClient fake;
  std::ostringstream logs;
  OperatorMetrics metrics;
  Controller controller(fake, ControllerOptions{}, &metrics, Logger(&logs, true, LogLevel::kInfo));
  auto server = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(server.ok()) << server.status();
  RegisterHandlers(**server, {"health", "metrics"}, controller, metrics, nullptr);
  (*server)->Start();
  const int port = (*server)->port();

  auto healthz = HttpGet("127.0.0.1", port, "/healthz");
  ASSERT_TRUE(healthz.ok()) << healthz.status();
  EXPECT_EQ(healthz->status, 200);
  auto readyz = HttpGet("127.0.0.1", port, "/readyz");
  ASSERT_TRUE(readyz.ok()) << readyz.status();
  EXPECT_EQ(readyz->status, 503);  // the informers were never started
  EXPECT_EQ(readyz->body, "informer caches not synced");
  auto m = HttpGet("127.0.0.1", port, "/metrics");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->content_type.find("text/plain"), std::string::npos);
  auto resolve = HttpGet("127.0.0.1", port, "/v1/resolve?namespace=ml&kernelcache=x&node=n");
  ASSERT_TRUE(resolve.ok()) << resolve.status();
  EXPECT_EQ(resolve->status, 404);  // not this listener's group
  (*server)->Stop();
  controller.Stop();
}

}  // namespace
}  // namespace kc::op
