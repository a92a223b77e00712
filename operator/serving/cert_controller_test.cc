#include "operator/serving/cert_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
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

// The decoded caBundle of entry `i` of a configuration ("" when unset).
std::string BundleOf(kube::FakeClient& client, const kube::Resource& r, const std::string& name,
                     int i = 0) {
  auto c = client.Get(r, "", name);
  if (!c.ok()) return "";
  const Json& cc = (*c)["webhooks"][i]["clientConfig"];
  if (!cc.contains("caBundle")) return "";
  auto d = kc::DecodeBase64(cc["caBundle"].get<std::string>());
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
  std::unique_ptr<CertController> Make() { return Make(options_); }
  std::unique_ptr<CertController> Make(const CertControllerOptions& options) {
    return std::make_unique<CertController>(
        client_, options, logger_,
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
  std::string MutatingBundle(int i = 0) {
    return BundleOf(client_, res::kMutatingWebhookConfigurations, "kc-mutating", i);
  }
  std::string ValidatingBundle() {
    return BundleOf(client_, res::kValidatingWebhookConfigurations, "kc-validating");
  }
  void LoseCaKey() {
    ASSERT_TRUE(client_
                    .Patch(res::kSecrets, "kc-system", "kc-tls", kube::PatchType::kMerge,
                           {{"data", {{kCaPrivateKeyKey, nullptr}}}})
                    .ok());
  }
  // A whole CA rotation by `c`: announce at `t`, promote once settled.
  void Rotate(CertController& c, TimePoint t) {
    LoseCaKey();
    auto announce = c.Reconcile(t);
    ASSERT_TRUE(announce.ok()) << announce.status();
    ASSERT_EQ(*announce, CertAction::kRecreateAll);
    ASSERT_FALSE(Data(Secret(), kNextCaKey).empty());
    auto promote = c.Reconcile(t + options_.ca_rotation_settle);
    ASSERT_TRUE(promote.ok()) << promote.status();
    ASSERT_EQ(*promote, CertAction::kRecreateAll);
    ASSERT_TRUE(Data(Secret(), kNextCaKey).empty());
  }
  // Fails the next `n` GETs of the Secret with NotFound, as a replica sees
  // it just before another one creates it.
  void HideSecretFromNextGets(int n) {
    auto left = std::make_shared<int>(n);
    client_.SetReactor([left](const kube::FakeAction& a) {
      if (a.verb == "get" && a.resource == "secrets" && *left > 0) {
        --*left;
        return NotFoundError("secrets \"kc-tls\" not found (hidden by the test)");
      }
      return OkStatus();
    });
  }

  kube::FakeClient client_;
  CertControllerOptions options_;
  std::ostringstream log_;
  op::Logger logger_{&log_, false, op::LogLevel::kDebug};  // one sink for every controller
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

// A CA rotation in two passes: announce (the next CA in caBundle and in
// ca-next.crt, nothing served changes), promote once settled (the next CA
// becomes ca.crt with a serving cert of it; the old CA stays in caBundle).
TEST_F(CertControllerTest, ALostCaKeyRecreatesEverything) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  const std::string old_ca = Data(Secret(), kCaKey);
  const std::string old_crt = Data(Secret(), kCertKey);
  LoseCaKey();
  log_.str("");

  auto announce = c->Reconcile(now_);
  ASSERT_TRUE(announce.ok()) << announce.status();
  EXPECT_EQ(*announce, CertAction::kRecreateAll);
  const std::string next = Data(Secret(), kNextCaKey);
  ASSERT_FALSE(next.empty());
  EXPECT_NE(next, old_ca);
  EXPECT_TRUE(CheckKeyMatches(next, Data(Secret(), kNextCaPrivateKeyKey)).ok());
  EXPECT_EQ(Data(Secret(), kCaKey), old_ca);
  EXPECT_EQ(Data(Secret(), kCertKey), old_crt) << "nothing served changes yet";
  EXPECT_EQ(MutatingBundle(), old_ca + next);
  EXPECT_EQ(MutatingBundle(1), old_ca + next);
  EXPECT_EQ(ValidatingBundle(), old_ca + next);
  EXPECT_NE(log_.str().find("next CA announced in caBundle"), std::string::npos) << log_.str();
  EXPECT_EQ(log_.str().find("webhook certificate RecreateAll"), std::string::npos);

  // Not settled: still waiting, Secret untouched.
  ASSERT_TRUE(c->Reconcile(now_ + options_.ca_rotation_settle - 1s).ok());
  EXPECT_EQ(Data(Secret(), kCertKey), old_crt);
  EXPECT_EQ(Data(Secret(), kNextCaKey), next);

  auto promote = c->Reconcile(now_ + options_.ca_rotation_settle);
  ASSERT_TRUE(promote.ok()) << promote.status();
  EXPECT_EQ(*promote, CertAction::kRecreateAll);
  const Json secret = Secret();
  EXPECT_EQ(Data(secret, kCaKey), next);
  EXPECT_TRUE(VerifyIssuedBy(Data(secret, kCertKey), next, now_).ok());
  EXPECT_EQ(Data(secret, kPreviousCaKey), old_ca);
  EXPECT_FALSE(secret["data"].contains(kNextCaKey));
  EXPECT_FALSE(secret["data"].contains(kNextCaPrivateKeyKey));
  EXPECT_FALSE(secret["metadata"].contains("annotations") &&
               secret["metadata"]["annotations"].contains(kNextCaAnnouncedAnnotation));
  EXPECT_NE(log_.str().find("webhook certificate RecreateAll"), std::string::npos);
  EXPECT_EQ(events_.back(), "kc-tls:WebhookCertificatesCreated");
  // caBundle trusts both, so a replica still serving the old CA's cert
  // verifies until it reloads; later passes keep both.
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(MutatingBundle(), next + old_ca) << "pass " << pass;
    EXPECT_EQ(ValidatingBundle(), next + old_ca) << "pass " << pass;
    auto keep = c->Reconcile(now_ + options_.ca_rotation_settle);
    ASSERT_TRUE(keep.ok());
    EXPECT_EQ(*keep, CertAction::kKeep);
  }
  // Once the previous CA has expired, it is no longer trusted.
  ASSERT_TRUE(c->Reconcile(now_ + std::chrono::hours(24 * 3651)).ok());
  EXPECT_EQ(MutatingBundle().find(old_ca), std::string::npos);
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

// On a fresh install the Secret is created before any caBundle names its
// CA: a replica that loses the race to create must not have announced a CA
// nobody will serve.
TEST_F(CertControllerTest, AFreshSecretIsCreatedBeforeTheCaBundleIsWritten) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  int create = -1, first_bundle = -1, i = 0;
  for (const auto& a : client_.Actions()) {
    if (a.verb == "create" && a.resource == "secrets") create = i;
    if (a.verb == "patch" && a.resource.find("webhookconfigurations") != std::string::npos &&
        first_bundle < 0) {
      first_bundle = i;
    }
    ++i;
  }
  ASSERT_GE(create, 0);
  ASSERT_GE(first_bundle, 0);
  EXPECT_LT(create, first_bundle);
  EXPECT_FALSE(Secret()["data"].contains(kPreviousCaKey));
}

// Two replicas both believing they lead (a hand-over) on a fresh install:
// the second one's create fails with AlreadyExists and it adopts the first
// one's Secret instead of replacing it (no second RecreateAll, caBundle and
// Secret untouched).
TEST_F(CertControllerTest, AReplicaLosingTheCreateRaceAdoptsTheWinnersSecret) {
  auto winner = Make();
  auto loser = Make();
  ASSERT_TRUE(winner->Reconcile(now_).ok());
  const Json first = Secret();
  const std::string bundle = MutatingBundle();
  ASSERT_EQ(bundle, Data(first, kCaKey));
  client_.ClearActions();
  log_.str("");
  HideSecretFromNextGets(1);  // the loser read "no Secret" just before the winner wrote it
  auto action = loser->Reconcile(now_);
  ASSERT_TRUE(action.ok()) << action.status();
  EXPECT_EQ(*action, CertAction::kKeep);
  const Json after = Secret();
  EXPECT_EQ(after["metadata"]["resourceVersion"], first["metadata"]["resourceVersion"]);
  EXPECT_EQ(Data(after, kCertKey), Data(first, kCertKey));
  EXPECT_EQ(MutatingBundle(), bundle);
  EXPECT_EQ(ValidatingBundle(), bundle);
  for (const auto& a : client_.Actions()) {
    EXPECT_FALSE(a.verb == "patch") << a.resource << " " << a.name;
  }
  EXPECT_NE(log_.str().find("adopting it"), std::string::npos) << log_.str();
  EXPECT_EQ(log_.str().find("webhook certificate RecreateAll"), std::string::npos) << log_.str();
  EXPECT_EQ(events_.size(), 1u);  // the winner's WebhookCertificatesCreated only
}

// A CA rotation whose Secret patch hits a 409 (the Secret changed since it
// was read) reads the Secret again and decides anew; the CA announced by the
// failed attempt does not stay in caBundle.
TEST_F(CertControllerTest, AConflictDuringARotationIsAdoptedAndLeavesNoStrayCa) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  const std::string old_ca = Data(Secret(), kCaKey);
  LoseCaKey();
  auto conflicts = std::make_shared<int>(1);
  client_.SetReactor([conflicts](const kube::FakeAction& a) {
    if (a.verb == "patch" && a.resource == "secrets" && *conflicts > 0) {
      --*conflicts;
      return ConflictError("the object has been modified (test)");
    }
    return OkStatus();
  });
  // The announce pass: its Secret patch conflicts, it reads again and
  // announces another next CA; the first one's caBundle entry is gone.
  auto r = c->Reconcile(now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, CertAction::kRecreateAll);
  EXPECT_NE(log_.str().find("adopting it"), std::string::npos) << log_.str();
  const std::string next = Data(Secret(), kNextCaKey);
  ASSERT_FALSE(next.empty());
  EXPECT_EQ(MutatingBundle(), old_ca + next);
  EXPECT_EQ(ValidatingBundle(), old_ca + next);
  ASSERT_TRUE(c->Reconcile(now_ + options_.ca_rotation_settle).ok());
  EXPECT_EQ(Data(Secret(), kCaKey), next);
  EXPECT_EQ(MutatingBundle(), next + old_ca);
}

// Two rotations in a row: a replica that has not reloaded since the first
// may still serve a cert of the first CA, so every CA still valid stays.
TEST_F(CertControllerTest, BackToBackRotationsKeepEveryValidCa) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  std::vector<std::string> cas = {Data(Secret(), kCaKey)};
  for (int rotation = 0; rotation < 2; ++rotation) {
    Rotate(*c, now_ + rotation * 10s);
    cas.insert(cas.begin(), Data(Secret(), kCaKey));
  }
  ASSERT_EQ(cas.size(), 3u);
  EXPECT_EQ(MutatingBundle(), cas[0] + cas[1] + cas[2]);
  EXPECT_EQ(Data(Secret(), kPreviousCaKey), cas[1] + cas[2]);
}

// The Secret deleted while replicas still serve its certificate from memory:
// the new Secret retains the CA the caBundle held, so they stay trusted
// until they reload.
TEST_F(CertControllerTest, ADeletedSecretIsRecreatedWithoutDroppingTheServedCa) {
  auto c = Make();
  ASSERT_TRUE(c->Reconcile(now_).ok());
  const std::string old_ca = Data(Secret(), kCaKey);
  ASSERT_TRUE(client_.Delete(res::kSecrets, "kc-system", "kc-tls").ok());
  auto r = c->Reconcile(now_);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, CertAction::kRecreateAll);
  const std::string new_ca = Data(Secret(), kCaKey);
  EXPECT_NE(new_ca, old_ca);
  EXPECT_EQ(Data(Secret(), kPreviousCaKey), old_ca);
  EXPECT_EQ(MutatingBundle(), new_ca + old_ca);
}

// /readyz for the webhook: not before a certificate is loaded, and only
// while every entry's caBundle trusts it; a CA rotation keeps replicas that
// have not reloaded yet Ready, because caBundle carries both CAs.
TEST_F(CertControllerTest, ReadyOnlyWhileTheServedCertificateIsTrustedByEveryCaBundle) {
  auto leader = Make();
  auto follower = Make();
  EXPECT_FALSE(follower->readiness().ready);
  EXPECT_EQ(follower->readiness().reason, "no serving certificate loaded yet");
  EXPECT_TRUE(IsNotFound(follower->Reload()));
  EXPECT_FALSE(follower->CheckServing(now_).ready);

  ASSERT_TRUE(leader->Reconcile(now_).ok());
  EXPECT_FALSE(follower->CheckServing(now_).ready) << "not loaded yet";
  ASSERT_TRUE(follower->Reload().ok());
  EXPECT_TRUE(follower->CheckServing(now_).ready) << follower->readiness().reason;
  EXPECT_TRUE(follower->readiness().ready);
  const std::string first_serial = follower->loaded_serial();

  // A blanked caBundle (one entry) makes it unready until the leader repairs it.
  ASSERT_TRUE(
      client_
          .Patch(res::kValidatingWebhookConfigurations, "", "kc-validating",
                 kube::PatchType::kJsonPatch,
                 Json::array({{{"op", "remove"}, {"path", "/webhooks/0/clientConfig/caBundle"}}}))
          .ok());
  Readiness blanked = follower->CheckServing(now_);
  EXPECT_FALSE(blanked.ready);
  EXPECT_NE(blanked.reason.find("ValidatingWebhookConfiguration kc-validating/h0.kernelcache.io"),
            std::string::npos)
      << blanked.reason;
  ASSERT_TRUE(leader->Reconcile(now_).ok());
  EXPECT_TRUE(follower->CheckServing(now_).ready);

  // A CA rotation: the follower still serves the old CA's cert and stays
  // Ready through both passes; after its reload it serves the new one, also
  // trusted.
  LoseCaKey();
  ASSERT_EQ(*leader->Reconcile(now_), CertAction::kRecreateAll);  // announce
  EXPECT_TRUE(follower->CheckServing(now_).ready) << follower->readiness().reason;
  ASSERT_EQ(*leader->Reconcile(now_ + options_.ca_rotation_settle), CertAction::kRecreateAll);
  ASSERT_TRUE(leader->Reload().ok());
  EXPECT_TRUE(leader->CheckServing(now_).ready) << leader->readiness().reason;
  EXPECT_NE(leader->loaded_serial(), first_serial);
  EXPECT_TRUE(follower->CheckServing(now_).ready) << follower->readiness().reason;
  EXPECT_EQ(follower->loaded_serial(), first_serial);
  ASSERT_TRUE(follower->Reload().ok());
  EXPECT_EQ(follower->loaded_serial(), leader->loaded_serial());
  EXPECT_TRUE(follower->CheckServing(now_).ready) << follower->readiness().reason;

  // Had the caBundle named only the new CA, the stale follower would have
  // been unready (what a rotation without overlap does).
  auto stale = Make();
  ASSERT_TRUE(stale->Reload().ok());  // the current (second) CA's cert
  Rotate(*leader, now_ + 10s);        // a third CA
  EXPECT_TRUE(stale->CheckServing(now_).ready) << "the second CA is retained";
  const std::string third = Data(Secret(), kCaKey);
  for (const char* config : {"kc-mutating", "kc-validating"}) {
    const kube::Resource& r = std::string(config) == "kc-mutating"
                                  ? res::kMutatingWebhookConfigurations
                                  : res::kValidatingWebhookConfigurations;
    auto cfg = client_.Get(r, "", config);
    ASSERT_TRUE(cfg.ok());
    Json ops = Json::array();
    for (size_t i = 0; i < (*cfg)["webhooks"].size(); ++i) {
      ops.push_back({{"op", "replace"},
                     {"path", "/webhooks/" + std::to_string(i) + "/clientConfig/caBundle"},
                     {"value", kc::EncodeBase64(third)}});
    }
    ASSERT_TRUE(client_.Patch(r, "", config, kube::PatchType::kJsonPatch, ops).ok());
  }
  Readiness untrusted = stale->CheckServing(now_);
  EXPECT_FALSE(untrusted.ready);
  EXPECT_NE(untrusted.reason.find("does not chain to the caBundle"), std::string::npos)
      << untrusted.reason;
}

// Run: a replica that is not Ready looks again every not_ready_interval
// (not every interval), so it serves the leader's first certificate within
// moments of its creation; Kick() makes the new leader write it at once.
TEST_F(CertControllerTest, RunPicksUpANewSecretQuicklyAndAKickedLeaderWritesAtOnce) {
  CertControllerOptions slow = options_;
  slow.interval = std::chrono::seconds(3600);
  slow.not_ready_interval = std::chrono::milliseconds(3600 * 1000);
  auto leader = Make(slow);
  CertControllerOptions follower_options = slow;
  follower_options.not_ready_interval = 10ms;
  auto follower = Make(follower_options);
  std::atomic<bool> leading{false};
  auto secret_gets = [&] {
    int gets = 0;
    for (const auto& a : client_.Actions()) gets += a.verb == "get" && a.resource == "secrets";
    return gets;
  };
  std::jthread leader_run(
      [&](std::stop_token stop) { leader->Run(stop, [&] { return leading.load(); }); });
  // Its first pass (not leader, no Secret yet) is done: it waits an hour now.
  ASSERT_TRUE(kc::testutil::Eventually([&] { return secret_gets() >= 1; }, 10s));
  std::jthread follower_run(
      [&](std::stop_token stop) { follower->Run(stop, [] { return false; }); });
  ASSERT_TRUE(kc::testutil::Eventually([&] { return secret_gets() >= 3; }, 10s));
  EXPECT_FALSE(leader->readiness().ready);
  EXPECT_FALSE(follower->readiness().ready);
  leading = true;
  leader->Kick();  // an hour's wait otherwise
  EXPECT_TRUE(kc::testutil::Eventually([&] { return leader->readiness().ready; }, 10s))
      << leader->readiness().reason;
  EXPECT_TRUE(kc::testutil::Eventually([&] { return follower->readiness().ready; }, 10s))
      << follower->readiness().reason;
  EXPECT_EQ(follower->loaded_serial(), ParseCert(Data(Secret(), kCertKey))->serial_hex);
  follower_run.request_stop();
  leader_run.request_stop();
}

}  // namespace
}  // namespace kc::webhook
