#include "operator/webhook/trust.h"

#include <gtest/gtest.h>

namespace kc::webhook {
namespace {

using std::chrono::hours;

const TimePoint kNow = std::chrono::system_clock::from_time_t(1800000000);  // 2027-01-15
const auto kDay = hours(24);

// Real certificates, made once: CAs valid from kNow (minus the 5-minute
// backdating) for `days`, and serving certificates issued by them.
struct Pki {
  CertPair old_ca, new_ca, other_ca, short_ca;
  CertPair old_serving, new_serving, short_serving;

  static const Pki& Get() {
    static const Pki* pki = [] {
      auto* p = new Pki();
      auto ca = [](const char* cn, int days) {
        auto c = CreateCa(cn, kNow, kDay * days);
        EXPECT_TRUE(c.ok()) << c.status();
        return *c;
      };
      auto serve = [](const CertPair& issuer, int days) {
        auto s = IssueServingCert(issuer, {{"svc"}, {}, kDay * days}, kNow);
        EXPECT_TRUE(s.ok()) << s.status();
        return *s;
      };
      p->old_ca = ca("old", 3650);
      p->new_ca = ca("new", 3650);
      p->other_ca = ca("other", 3650);
      p->short_ca = ca("short", 10);  // expired from kNow + 10 days
      p->old_serving = serve(p->old_ca, 90);
      p->new_serving = serve(p->new_ca, 90);
      p->short_serving = serve(p->short_ca, 5);
      return p;
    }();
    return *pki;
  }
};

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += s;
  return out;
}

TEST(TrustTest, PlanBundleTable) {
  const Pki& k = Pki::Get();
  const std::string old_ca = k.old_ca.cert_pem, new_ca = k.new_ca.cert_pem;
  const std::string short_ca = k.short_ca.cert_pem;
  struct Case {
    const char* name;
    std::string current;
    std::vector<std::string> retained;
    TimePoint now;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"no rotation yet: the current CA alone", new_ca, {}, kNow, {new_ca}},
      {"after a rotation: new first, then the old", new_ca, {old_ca}, kNow, {new_ca, old_ca}},
      {"two retained, in order", new_ca, {old_ca, short_ca}, kNow, {new_ca, old_ca, short_ca}},
      {"a retained CA that expired is dropped",
       new_ca,
       {short_ca, old_ca},
       kNow + kDay * 11,
       {new_ca, old_ca}},
      {"a retained CA equal to the current is not repeated",
       new_ca,
       {new_ca, old_ca},
       kNow,
       {new_ca, old_ca}},
      {"a retained CA listed twice appears once", new_ca, {old_ca, old_ca}, kNow, {new_ca, old_ca}},
      {"a serving certificate is not a CA", new_ca, {k.old_serving.cert_pem}, kNow, {new_ca}},
      {"garbage is dropped",
       new_ca,
       {"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
       kNow,
       {new_ca}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PlanBundle(c.now, c.current, c.retained), Join(c.want)) << c.name;
  }
}

TEST(TrustTest, RetainAtRotationTable) {
  const Pki& k = Pki::Get();
  const std::string old_ca = k.old_ca.cert_pem, new_ca = k.new_ca.cert_pem;
  const std::string other_ca = k.other_ca.cert_pem, short_ca = k.short_ca.cert_pem;
  struct Case {
    const char* name;
    RotationInputs in;
    TimePoint now;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"fresh install: nothing to retain", {new_ca, "", {}, {}}, kNow, {}},
      {"rotation of a Secret: the old CA", {new_ca, old_ca, {}, {old_ca}}, kNow, {old_ca}},
      {"the old CA and what it retained, in order",
       {new_ca, old_ca, {short_ca}, {old_ca, short_ca}},
       kNow,
       {old_ca, short_ca}},
      {"a retained CA that expired is dropped",
       {new_ca, old_ca, {short_ca}, {}},
       kNow + kDay * 11,
       {old_ca}},
      {"the Secret is the record: a foreign CA in the bundle is not kept",
       {new_ca, old_ca, {}, {old_ca, other_ca}},
       kNow,
       {old_ca}},
      {"Secret deleted: the caBundle's CAs (replicas may serve them from memory)",
       {new_ca, "", {}, {old_ca, short_ca}},
       kNow,
       {old_ca, short_ca}},
      {"Secret's CA unreadable: the caBundle's CAs",
       {new_ca, "not a certificate", {}, {old_ca}},
       kNow,
       {old_ca}},
      {"Secret's CA is a serving cert: the caBundle's CAs",
       {new_ca, k.old_serving.cert_pem, {}, {old_ca}},
       kNow,
       {old_ca}},
      {"Secret deleted, caBundle already holds the new CA: not retained twice",
       {new_ca, "", {}, {new_ca, old_ca, old_ca}},
       kNow,
       {old_ca}},
      {"an expired old CA is not retained", {new_ca, short_ca, {}, {}}, kNow + kDay * 11, {}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(RetainAtRotation(c.now, c.in), c.want) << c.name;
  }
}

TEST(TrustTest, DecideCaRotationTable) {
  const auto settle = std::chrono::seconds(5);
  const TimePoint t = kNow;
  auto st = [](bool due, bool usable, std::optional<TimePoint> at, bool in_bundles) {
    return CaRotationState{due, usable, at, in_bundles};
  };
  struct Case {
    const char* name;
    CaRotationState s;
    TimePoint now;
    CaRotationStep want;
  };
  const Case cases[] = {
      {"nothing due", st(false, false, std::nullopt, false), t, CaRotationStep::kNone},
      {"nothing due, a stale next CA lying around", st(false, true, t, true), t,
       CaRotationStep::kNone},
      {"due, no next CA yet: announce", st(true, false, std::nullopt, false), t,
       CaRotationStep::kAnnounce},
      {"due, next CA unusable (expired, key lost): announce another",
       st(true, false, t - hours(1), true), t, CaRotationStep::kAnnounce},
      {"announced now, already in every caBundle: settle first", st(true, true, t, true), t,
       CaRotationStep::kWait},
      {"announced 4 s ago: wait", st(true, true, t - std::chrono::seconds(4), true), t,
       CaRotationStep::kWait},
      {"announced 5 s ago and in every caBundle: promote",
       st(true, true, t - std::chrono::seconds(5), true), t, CaRotationStep::kPromote},
      {"settled but an entry lacks it (caBundle write failed, or blanked): wait",
       st(true, true, t - hours(1), false), t, CaRotationStep::kWait},
      {"no stamp (edited by hand): promote once in every caBundle",
       st(true, true, std::nullopt, true), t, CaRotationStep::kPromote},
      {"no stamp, not in every caBundle: wait", st(true, true, std::nullopt, false), t,
       CaRotationStep::kWait},
      {"stamped in the future (clock skew between leaders): wait",
       st(true, true, t + std::chrono::seconds(30), true), t, CaRotationStep::kWait},
  };
  for (const Case& c : cases) {
    EXPECT_STREQ(CaRotationStepName(DecideCaRotation(c.now, c.s, settle)),
                 CaRotationStepName(c.want))
        << c.name;
  }
}

TEST(TrustTest, DecideServingReadyTable) {
  const Pki& k = Pki::Get();
  const std::string old_ca = k.old_ca.cert_pem, new_ca = k.new_ca.cert_pem;
  const std::string old_crt = k.old_serving.cert_pem, new_crt = k.new_serving.cert_pem;
  auto entries = [](std::vector<std::string> bundles) {
    std::vector<EntryBundle> out;
    for (size_t i = 0; i < bundles.size(); ++i) {
      out.push_back({"MutatingWebhookConfiguration kc/h" + std::to_string(i), bundles[i]});
    }
    return std::optional<std::vector<EntryBundle>>(out);
  };
  const std::optional<std::vector<EntryBundle>> unknown;
  struct Case {
    const char* name;
    std::string served;
    std::optional<std::vector<EntryBundle>> entries;
    TimePoint now;
    bool want;
    std::string reason_has;  // a piece of the reason when not ready
  };
  const Case cases[] = {
      {"nothing served yet (fresh install)", "", entries({new_ca}), kNow, false,
       "no serving certificate loaded"},
      {"nothing served, configurations unread", "", unknown, kNow, false, "no serving"},
      {"served, trusted by the only entry", new_crt, entries({new_ca}), kNow, true, ""},
      {"served, trusted by every entry", new_crt, entries({new_ca, new_ca + old_ca}), kNow, true,
       ""},
      {"during a rotation the old cert is still trusted", old_crt, entries({new_ca + old_ca}), kNow,
       true, ""},
      {"during a rotation the new cert is trusted", new_crt, entries({new_ca + old_ca}), kNow, true,
       ""},
      {"caBundle names another CA (the replica did not reload yet)", old_crt, entries({new_ca}),
       kNow, false, "does not chain to the caBundle of MutatingWebhookConfiguration kc/h0"},
      {"one entry of two does not trust it", new_crt, entries({new_ca, old_ca}), kNow, false,
       "kc/h1"},
      {"an entry with no caBundle yet", new_crt, entries({new_ca, ""}), kNow, false,
       "kc/h1 has no caBundle yet"},
      {"no configuration exists: only the certificate counts", new_crt, entries({}), kNow, true,
       ""},
      {"configurations unreadable: only the certificate counts", new_crt, unknown, kNow, true, ""},
      {"the served certificate expired", k.short_serving.cert_pem, unknown, kNow + kDay * 6, false,
       "is not valid now"},
      {"the served certificate is not yet valid", new_crt, entries({new_ca}), kNow - hours(1),
       false, "is not valid now"},
      {"garbage served", "junk", unknown, kNow, false, "does not parse"},
  };
  for (const Case& c : cases) {
    const Readiness r = DecideServingReady(c.now, c.served, c.entries);
    EXPECT_EQ(r.ready, c.want) << c.name << ": " << r.reason;
    if (c.want) {
      EXPECT_EQ(r.reason, "") << c.name;
    } else {
      EXPECT_NE(r.reason.find(c.reason_has), std::string::npos) << c.name << ": " << r.reason;
    }
  }
}

}  // namespace
}  // namespace kc::webhook
