#include "operator/webhook/cert_controller.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "base/base64.h"
#include "kube/config.h"
#include "kube/testing/fake_client.h"
#include "testing/eventually.h"

namespace kc::webhook {
namespace {

using Json = kube::Json;
using namespace std::chrono_literals;
namespace res = kube::resources;

Json WebhookConfig(const std::string& kind, const std::string& name, int entries) {
  Json hooks = Json::array();
  for (int i = 0; i < entries; ++i) {
    hooks.push_back({{"name", "h" + std::to_string(i) + ".kernelcache.io"},
                     {"clientConfig", {{"url", "https://127.0.0.1:1/x"}}}});
  }
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", name}}},
          {"webhooks", hooks}};
}

std::string Data(const Json& secret, const char* key) {
  auto d = kc::DecodeBase64(secret["data"].value(key, ""));
  return d.ok() ? *d : "";
}

class CertControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(client_
                    .Create(res::kMutatingWebhookConfigurations, "",
                            WebhookConfig("MutatingWebhookConfiguration", "kc-mutating", 2))
                    .ok());
    ASSERT_TRUE(client_
                    .Create(res::kValidatingWebhookConfigurations, "",
                            WebhookConfig("ValidatingWebhookConfiguration", "kc-validating", 1))
                    .ok());
    ASSERT_TRUE(client_
                    .Create(res::kMutatingWebhookConfigurations, "",
                            WebhookConfig("MutatingWebhookConfiguration", "someone-else", 1))
                    .ok());
    options_.ns = "kc-system";
    options_.secret_name = "kc-tls";
    options_.service_name = "kc-webhook";
    options_.ips = {"127.0.0.1"};
    options_.mutating_config = "kc-mutating";
    options_.validating_config = "kc-validating";
  }
  std::unique_ptr<CertController> Make() {
    return std::make_unique<CertController>(
        client_, options_, op::Logger(&log_, false, op::LogLevel::kDebug),
        [this](const CertPair& p) {
          std::lock_guard<std::mutex> l(mu_);
          loaded_.push_back(p);
          return OkStatus();
        },
        [this](const Json& involved, const std::string& reason, const std::string&) {
          std::lock_guard<std::mutex> l(mu_);
          events_.push_back(involved["metadata"].value("name", "") + ":" + reason);
        });
  }
  Json Secret() {
    auto s = client_.Get(res::kSecrets, "kc-system", "kc-tls");
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : Json::object();
  }
  size_t Loaded() {
    std::lock_guard<std::mutex> l(mu_);
    return loaded_.size();
  }

  kube::FakeClient client_;
  CertControllerOptions options_;
  std::ostringstream log_;
  std::mutex mu_;
  std::vector<CertPair> loaded_;
  std::vector<std::string> events_;
  const TimePoint now_ = std::chrono::system_clock::now();
};

TEST_F(CertControllerTest, CreatesTheSecretAndWritesCaBundleIntoItsOwnConfigsOnly) {
  auto c = Make();
  auto action = c->Reconcile(now_);
  ASSERT_TRUE(action.ok()) << action.status();
  EXPECT_EQ(*action, CertAction::kRecreateAll);
  Json secret = Secret();
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  const std::string ca = Data(secret, kCaKey);
  const std::string crt = Data(secret, kCertKey);
  EXPECT_TRUE(VerifyIssuedBy(crt, ca, now_).ok());
  EXPECT_TRUE(CheckKeyMatches(crt, Data(secret, kPrivateKeyKey)).ok());
  EXPECT_TRUE(CheckKeyMatches(ca, Data(secret, kCaPrivateKeyKey)).ok());
  auto info = ParseCert(crt);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->dns_names, ServiceDnsNames("kc-webhook", "kc-system"));
  EXPECT_EQ(info->ips, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(events_, std::vector<std::string>{"kc-tls:WebhookCertificatesCreated"});

  const std::string bundle = kc::EncodeBase64(ca);
  auto m = client_.Get(res::kMutatingWebhookConfigurations, "", "kc-mutating");
  ASSERT_TRUE(m.ok());
  ASSERT_EQ((*m)["webhooks"].size(), 2u);
  for (const Json& h : (*m)["webhooks"]) EXPECT_EQ(h["clientConfig"]["caBundle"], bundle);
  EXPECT_EQ((*m)["webhooks"][0]["clientConfig"]["url"], "https://127.0.0.1:1/x");
  auto v = client_.Get(res::kValidatingWebhookConfigurations, "", "kc-validating");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)["webhooks"][0]["clientConfig"]["caBundle"], bundle);
  auto other = client_.Get(res::kMutatingWebhookConfigurations, "", "someone-else");
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE((*other)["webhooks"][0]["clientConfig"].contains("caBundle"));

  // A second pass keeps everything and writes nothing.
  client_.ClearActions();
  auto again = c->Reconcile(now_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, CertAction::kKeep);
  for (const auto& a : client_.Actions()) EXPECT_EQ(a.verb, "get") << a.resource << " " << a.name;

  // A blanked caBundle (helm upgrade) is written again.
  ASSERT_TRUE(
      client_
          .Patch(res::kMutatingWebhookConfigurations, "", "kc-mutating",
                 kube::PatchType::kJsonPatch,
                 Json::array({{{"op", "remove"}, {"path", "/webhooks/1/clientConfig/caBundle"}}}))
          .ok());
  ASSERT_TRUE(c->Reconcile(now_).ok());
  m = client_.Get(res::kMutatingWebhookConfigurations, "", "kc-mutating");
  EXPECT_EQ((*m)["webhooks"][1]["clientConfig"]["caBundle"], bundle);
}

TEST_F(CertControllerTest, RenewsTheServingCertFromTheSameCa) {
  options_.serving_lifetime = 60s;
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  const Json first = Secret();
  auto keep = c->Reconcile(now_ + 30s);  // 36 s of 66 left
  ASSERT_TRUE(keep.ok());
  EXPECT_EQ(*keep, CertAction::kKeep);
  auto renew = c->Reconcile(now_ + 45s);  // 15 s of 66 left
  ASSERT_TRUE(renew.ok()) << renew.status();
  EXPECT_EQ(*renew, CertAction::kRenewServing);
  const Json second = Secret();
  EXPECT_EQ(Data(second, kCaKey), Data(first, kCaKey));
  EXPECT_NE(Data(second, kCertKey), Data(first, kCertKey));
  EXPECT_TRUE(VerifyIssuedBy(Data(second, kCertKey), Data(second, kCaKey), now_ + 45s).ok());
  EXPECT_EQ(events_.back(), "kc-tls:WebhookCertificateRenewed");
}

TEST_F(CertControllerTest, ALostCaKeyRecreatesEverything) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  const std::string old_ca = Data(Secret(), kCaKey);
  ASSERT_TRUE(client_
                  .Patch(res::kSecrets, "kc-system", "kc-tls", kube::PatchType::kMerge,
                         {{"data", {{kCaPrivateKeyKey, nullptr}}}})
                  .ok());
  auto r = c->Reconcile(now_);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, CertAction::kRecreateAll);
  const std::string new_ca = Data(Secret(), kCaKey);
  EXPECT_NE(new_ca, old_ca);
  EXPECT_EQ(Data(Secret(), kPreviousCaKey), old_ca);
  // caBundle trusts both, so a replica still serving the old CA's cert
  // verifies until it reloads; a later pass keeps both.
  for (int pass = 0; pass < 2; ++pass) {
    auto m = client_.Get(res::kMutatingWebhookConfigurations, "", "kc-mutating");
    ASSERT_TRUE(m.ok());
    auto bundle =
        kc::DecodeBase64((*m)["webhooks"][0]["clientConfig"]["caBundle"].get<std::string>());
    ASSERT_TRUE(bundle.ok());
    EXPECT_EQ(*bundle, new_ca + old_ca) << "pass " << pass;
    auto keep = c->Reconcile(now_);
    ASSERT_TRUE(keep.ok());
    EXPECT_EQ(*keep, CertAction::kKeep);
  }
  // Once the previous CA has expired, only the current one is trusted.
  ASSERT_TRUE(c->Reconcile(now_ + std::chrono::hours(24 * 3651)).ok());
  auto m = client_.Get(res::kMutatingWebhookConfigurations, "", "kc-mutating");
  auto bundle =
      kc::DecodeBase64((*m)["webhooks"][0]["clientConfig"]["caBundle"].get<std::string>());
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ(bundle->find(old_ca), std::string::npos);
}

TEST_F(CertControllerTest, ReloadHandsOnlyChangedPairsToTheServer) {
  auto c = Make();
  EXPECT_TRUE(IsNotFound(c->Reload()));
  EXPECT_EQ(Loaded(), 0u);
  ASSERT_TRUE(c->Reconcile(now_).ok());
  ASSERT_TRUE(c->Reload().ok());
  ASSERT_TRUE(c->Reload().ok());
  ASSERT_EQ(Loaded(), 1u);
  EXPECT_EQ(loaded_[0].cert_pem, Data(Secret(), kCertKey));
  EXPECT_EQ(c->loaded_serial(), ParseCert(loaded_[0].cert_pem)->serial_hex);
}

TEST_F(CertControllerTest, ExternalModeNeverWritesAndLoadsWhatCertManagerIssued) {
  options_.external = true;
  options_.interval = 1s;
  auto c = Make();
  std::jthread run([&](std::stop_token stop) { c->Run(stop, [] { return true; }); });
  // cert-manager's Secret appears later.
  auto ca = CreateCa("cm-ca", now_, 24h);
  ASSERT_TRUE(ca.ok());
  auto s = IssueServingCert(*ca, {{"kc-webhook.kc-system.svc"}, {}, 24h}, now_);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(client_
                  .Create(res::kSecrets, "kc-system",
                          {{"metadata", {{"name", "kc-tls"}}},
                           {"type", "kubernetes.io/tls"},
                           {"data",
                            {{kCaKey, kc::EncodeBase64(ca->cert_pem)},
                             {kCertKey, kc::EncodeBase64(s->cert_pem)},
                             {kPrivateKeyKey, kc::EncodeBase64(s->key_pem)}}}})
                  .ok());
  EXPECT_TRUE(kc::testutil::Eventually([&] { return Loaded() == 1; }, 10s));
  run.request_stop();
  run.join();
  EXPECT_EQ(Data(Secret(), kCertKey), s->cert_pem);  // untouched
  for (const auto& a : client_.Actions()) {
    EXPECT_TRUE(a.verb == "get" || a.resource != "secrets" || a.verb == "create")
        << a.verb << " " << a.resource;
    EXPECT_NE(a.verb, "patch") << a.resource;
  }
  auto m = client_.Get(res::kMutatingWebhookConfigurations, "", "kc-mutating");
  EXPECT_FALSE((*m)["webhooks"][0]["clientConfig"].contains("caBundle"));
}

}  // namespace
}  // namespace kc::webhook
