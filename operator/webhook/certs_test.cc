#include "operator/webhook/certs.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kc::webhook {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

const TimePoint kNow = std::chrono::system_clock::from_time_t(1800000000);  // 2027-01-15

TEST(CertsTest, ServiceDnsNames) {
  EXPECT_EQ(
      ServiceDnsNames("kc-webhook", "kc-system"),
      (std::vector<std::string>{"kc-webhook", "kc-webhook.kc-system", "kc-webhook.kc-system.svc",
                                "kc-webhook.kc-system.svc.cluster.local"}));
}

TEST(CertsTest, IssuedCertVerifiesAgainstItsCaAndCarriesTheSans) {
  auto ca = CreateCa("test-ca", kNow, hours(24 * 3650));
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_NE(ca->cert_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_NE(ca->key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
  auto ca_info = ParseCert(ca->cert_pem);
  ASSERT_TRUE(ca_info.ok()) << ca_info.status();
  EXPECT_TRUE(ca_info->is_ca);
  EXPECT_EQ(ca_info->not_after, kNow + hours(24 * 3650));
  EXPECT_EQ(ca_info->not_before, kNow - std::chrono::minutes(5));

  ServingCertRequest req{ServiceDnsNames("svc", "ns"), {"127.0.0.1", "::1"}, hours(24 * 90)};
  auto serving = IssueServingCert(*ca, req, kNow);
  ASSERT_TRUE(serving.ok()) << serving.status();
  auto info = ParseCert(serving->cert_pem);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->dns_names, req.dns_names);
  EXPECT_EQ(info->ips, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(info->not_after, kNow + hours(24 * 90));
  EXPECT_EQ(info->serial_hex.size(), 32u);
  EXPECT_NE(info->serial_hex, ca_info->serial_hex);

  EXPECT_TRUE(VerifyIssuedBy(serving->cert_pem, ca->cert_pem, kNow).ok());
  EXPECT_TRUE(CheckKeyMatches(serving->cert_pem, serving->key_pem).ok());
  // Not before its notBefore, not after its notAfter.
  EXPECT_FALSE(VerifyIssuedBy(serving->cert_pem, ca->cert_pem, kNow - hours(1)).ok());
  EXPECT_FALSE(VerifyIssuedBy(serving->cert_pem, ca->cert_pem, kNow + hours(24 * 91)).ok());

  // Another CA does not verify it; another key does not match it.
  auto other = CreateCa("other-ca", kNow, hours(24));
  ASSERT_TRUE(other.ok());
  Status wrong_ca = VerifyIssuedBy(serving->cert_pem, other->cert_pem, kNow);
  EXPECT_FALSE(wrong_ca.ok());
  EXPECT_NE(wrong_ca.message().find("does not verify"), std::string::npos) << wrong_ca;
  EXPECT_FALSE(CheckKeyMatches(serving->cert_pem, other->key_pem).ok());
}

TEST(CertsTest, BadInputsAreErrorsNotCrashes) {
  EXPECT_FALSE(ParseCert("").ok());
  EXPECT_FALSE(ParseCert("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n").ok());
  EXPECT_FALSE(CheckKeyMatches("x", "y").ok());
  EXPECT_FALSE(VerifyIssuedBy("x", "y", kNow).ok());
  EXPECT_FALSE(IssueServingCert({"x", "y"}, {{"a"}, {}, hours(1)}, kNow).ok());
  auto ca = CreateCa("ca", kNow, hours(1));
  ASSERT_TRUE(ca.ok());
  EXPECT_FALSE(IssueServingCert(*ca, {{}, {}, hours(1)}, kNow).ok());
  EXPECT_FALSE(CreateCa("ca", kNow, seconds(0)).ok());
}

TEST(CertsTest, SplitPemCertsTable) {
  const std::string a = "-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n";
  const std::string b = "-----BEGIN CERTIFICATE-----\nQg==\n-----END CERTIFICATE-----\n";
  struct Case {
    const char* name;
    std::string pem;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"empty", "", {}},
      {"one", a, {a}},
      {"two, in order", a + b, {a, b}},
      {"text around and between is dropped", "# bundle\n" + a + "junk\n" + b + "tail", {a, b}},
      {"no final newline gets one", a.substr(0, a.size() - 1), {a}},
      {"an unterminated block is dropped", a + "-----BEGIN CERTIFICATE-----\nQg==\n", {a}},
      {"a key is not a certificate",
       "-----BEGIN PRIVATE KEY-----\nQQ==\n-----END PRIVATE KEY-----\n",
       {}},
  };
  for (const Case& c : cases) EXPECT_EQ(SplitPemCerts(c.pem), c.want) << c.name;
}

TEST(CertsTest, VerifyIssuedByAcceptsABundleOfCas) {
  auto ca = CreateCa("ca", kNow, hours(24 * 3650));
  auto other = CreateCa("other", kNow, hours(24 * 3650));
  ASSERT_TRUE(ca.ok() && other.ok());
  auto s = IssueServingCert(*ca, {{"svc"}, {}, hours(24)}, kNow);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(VerifyIssuedBy(s->cert_pem, other->cert_pem + ca->cert_pem, kNow).ok());
  EXPECT_TRUE(VerifyIssuedBy(s->cert_pem, ca->cert_pem + other->cert_pem, kNow).ok());
  EXPECT_FALSE(VerifyIssuedBy(s->cert_pem, other->cert_pem + other->cert_pem, kNow).ok());
  EXPECT_FALSE(VerifyIssuedBy(s->cert_pem, "", kNow).ok());
}

TEST(CertsTest, ShortLifetimesBackdateByATenth) {
  auto ca = CreateCa("ca", kNow, seconds(60));
  ASSERT_TRUE(ca.ok());
  auto info = ParseCert(ca->cert_pem);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->not_before, kNow - seconds(6));
}

TEST(CertsTest, InspectSecretCrossChecks) {
  auto ca = CreateCa("ca", kNow, hours(24 * 3650));
  ASSERT_TRUE(ca.ok());
  auto s = IssueServingCert(*ca, {{"svc"}, {}, hours(24)}, kNow);
  ASSERT_TRUE(s.ok());
  auto other = IssueServingCert(*ca, {{"svc"}, {}, hours(24)}, kNow);
  ASSERT_TRUE(other.ok());

  SecretState good = InspectSecret(ca->cert_pem, s->cert_pem, s->key_pem, kNow);
  EXPECT_TRUE(good.ca && good.serving && good.key_matches && good.serving_signed_by_ca);
  SecretState wrong_key = InspectSecret(ca->cert_pem, s->cert_pem, other->key_pem, kNow);
  EXPECT_FALSE(wrong_key.key_matches);
  SecretState empty = InspectSecret("", "", "", kNow);
  EXPECT_FALSE(empty.ca || empty.serving || empty.key_matches || empty.serving_signed_by_ca);
}

// --- Decide ---

CertInfo Info(TimePoint nb, TimePoint na, std::vector<std::string> dns = {"svc"},
              std::vector<std::string> ips = {}, bool is_ca = false) {
  CertInfo c;
  c.not_before = nb;
  c.not_after = na;
  c.dns_names = std::move(dns);
  c.ips = std::move(ips);
  c.is_ca = is_ca;
  return c;
}

TEST(CertDecideTest, Table) {
  const TimePoint t = kNow;
  const auto day = hours(24);
  const CertInfo ca = Info(t - day * 100, t + day * 3000, {}, {}, true);
  const CertInfo serving = Info(t - day * 10, t + day * 80);  // 90 days, 80 left
  const CertWanted wanted{{"svc"}, {}};
  auto state = [&](std::optional<CertInfo> c, std::optional<CertInfo> s, bool key = true,
                   bool signed_by = true) {
    return SecretState{c, s, key, signed_by};
  };
  CertInfo ca_not_ca = ca;
  ca_not_ca.is_ca = false;
  struct Case {
    const char* name;
    SecretState st;
    CertWanted wanted;
    TimePoint now;
    CertAction want;
  };
  const Case cases[] = {
      {"all good", state(ca, serving), wanted, t, CertAction::kKeep},
      {"empty secret", state(std::nullopt, std::nullopt, false, false), wanted, t,
       CertAction::kRecreateAll},
      {"no CA, serving fine", state(std::nullopt, serving), wanted, t, CertAction::kRecreateAll},
      {"CA is not a CA", state(ca_not_ca, serving), wanted, t, CertAction::kRecreateAll},
      {"CA near expiry (< 1/3 left)",
       state(Info(t - day * 3000, t + day * 100, {}, {}, true), serving), wanted, t,
       CertAction::kRecreateAll},
      {"CA expired", state(Info(t - day * 10, t - day, {}, {}, true), serving), wanted, t,
       CertAction::kRecreateAll},
      {"CA not yet valid", state(Info(t + day, t + day * 10, {}, {}, true), serving), wanted, t,
       CertAction::kRecreateAll},
      {"no serving cert", state(ca, std::nullopt, false, false), wanted, t,
       CertAction::kRenewServing},
      {"key does not match", state(ca, serving, false), wanted, t, CertAction::kRenewServing},
      {"not issued by this CA", state(ca, serving, true, false), wanted, t,
       CertAction::kRenewServing},
      {"31 of 90 days left: keep", state(ca, Info(t - day * 59, t + day * 31)), wanted, t,
       CertAction::kKeep},
      {"29 of 90 days left: renew", state(ca, Info(t - day * 61, t + day * 29)), wanted, t,
       CertAction::kRenewServing},
      {"serving expired", state(ca, Info(t - day * 91, t - day)), wanted, t,
       CertAction::kRenewServing},
      {"serving not yet valid", state(ca, Info(t + day, t + day * 90)), wanted, t,
       CertAction::kRenewServing},
      {"a DNS name added",
       state(ca, serving),
       {{"svc", "svc.ns"}, {}},
       t,
       CertAction::kRenewServing},
      {"a DNS name removed", state(ca, Info(t - day, t + day * 89, {"svc", "old"})), wanted, t,
       CertAction::kRenewServing},
      {"names in another order and case: keep",
       state(ca, Info(t - day, t + day * 89, {"B", "a"})),
       {{"a", "b"}, {}},
       t,
       CertAction::kKeep},
      {"an IP added", state(ca, serving), {{"svc"}, {"127.0.0.1"}}, t, CertAction::kRenewServing},
      {"an IP removed", state(ca, Info(t - day, t + day * 89, {"svc"}, {"10.0.0.1"})), wanted, t,
       CertAction::kRenewServing},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(CertActionName(Decide(c.now, c.st, c.wanted)), std::string(CertActionName(c.want)))
        << c.name;
  }
}

TEST(CertDecideTest, FreshlyIssuedPairIsKeptAndRenewedAtTwoThirds) {
  auto ca = CreateCa("ca", kNow, hours(24 * 3650));
  ASSERT_TRUE(ca.ok());
  auto s = IssueServingCert(*ca, {{"svc"}, {"127.0.0.1"}, hours(24 * 90)}, kNow);
  ASSERT_TRUE(s.ok());
  const CertWanted wanted{{"svc"}, {"127.0.0.1"}};
  auto at = [&](TimePoint now) {
    return Decide(now, InspectSecret(ca->cert_pem, s->cert_pem, s->key_pem, now), wanted);
  };
  EXPECT_EQ(at(kNow), CertAction::kKeep);
  EXPECT_EQ(at(kNow + hours(24 * 55)), CertAction::kKeep);
  EXPECT_EQ(at(kNow + hours(24 * 65)), CertAction::kRenewServing);
}

}  // namespace
}  // namespace kc::webhook
