#include "operator/controller/miss_intake.h"

#include <gtest/gtest.h>

#include "core/gate_report.h"
#include "core/miss_channel.h"

namespace kc::op {
namespace {

constexpr char kFp[] = "0123456789abcdef";
const std::string kDigest(64, 'a');

Json Review(bool authenticated, const Json& user, const Json& audiences = {"kernelcache.io"}) {
  return {{"status", {{"authenticated", authenticated}, {"user", user}, {"audiences", audiences}}}};
}
Json PodUser(const std::string& ns = "ml", const std::string& pod = "p1",
             const std::string& uid = "u1") {
  return {{"username", "system:serviceaccount:" + ns + ":default"},
          {"extra", {{core::kPodNameExtra, {pod}}, {core::kPodUidExtra, {uid}}}}};
}

Json GatedPod(core::GateOutcome outcome, const std::string& fp = kFp, const std::string& uid = "u1",
              const std::string& consumer = "llama") {
  core::GateReport g;
  g.outcome = outcome;
  g.reason = "Validated";
  g.fingerprint = fp;
  g.manifest_digest = kDigest;
  Json labels = Json::object();
  if (!consumer.empty()) labels[core::kConsumerLabel] = consumer;
  return {
      {"metadata", {{"name", "p1"}, {"namespace", "ml"}, {"uid", uid}, {"labels", labels}}},
      {"spec", {{"nodeName", "gpu-1"}}},
      {"status",
       {{"initContainerStatuses",
         {{{"name", core::kGateContainer},
           {"state", {{"terminated", {{"exitCode", 0}, {"message", GateReportToJson(g)}}}}}}}}}}};
}

core::MissReport Report(const std::string& fp = kFp) {
  return {fp, {{core::MissFramework::kTriton, "K", "kernel add_kernel", 8, 100}}};
}

TEST(MissIntake, BearerTokenNeedsTheScheme) {
  EXPECT_EQ(*BearerToken("Bearer abc"), "abc");
  for (const char* bad : {"", "Bearer ", "Basic abc", "bearer abc", "abc"}) {
    EXPECT_EQ(BearerToken(bad).status().code(), StatusCode::kUnauthenticated) << bad;
  }
}

TEST(MissIntake, TokenReviewRequestAsksForOurAudience) {
  Json r = TokenReviewRequest("t");
  EXPECT_EQ(r["kind"], "TokenReview");
  EXPECT_EQ(r["spec"]["token"], "t");
  EXPECT_EQ(r["spec"]["audiences"], Json::array({core::kMissTokenAudience}));
}

TEST(MissIntake, IdentityFromTokenReviewTable) {
  struct Case {
    const char* name;
    Json review;
    StatusCode want;
  };
  Json no_uid = PodUser();
  no_uid["extra"].erase(core::kPodUidExtra);
  Json user_token = {{"username", "alice"}};
  Json bad_ns = PodUser();
  bad_ns["username"] = "system:serviceaccount:";
  const std::vector<Case> cases = {
      {"a pod's token", Review(true, PodUser()), StatusCode::kOk},
      {"not authenticated", Review(false, PodUser()), StatusCode::kUnauthenticated},
      {"another audience", Review(true, PodUser(), {"api"}), StatusCode::kUnauthenticated},
      {"no status", Json::object(), StatusCode::kUnauthenticated},
      {"not an object", Json::array(), StatusCode::kUnauthenticated},
      {"no pod uid", Review(true, no_uid), StatusCode::kPermissionDenied},
      {"a user's token", Review(true, user_token), StatusCode::kPermissionDenied},
      {"no namespace", Review(true, bad_ns), StatusCode::kPermissionDenied},
      {"user not an object", Review(true, "x"), StatusCode::kPermissionDenied},
  };
  for (const Case& c : cases) {
    auto id = IdentityFromTokenReview(c.review);
    EXPECT_EQ(id.status().code(), c.want) << c.name << ": " << id.status().message();
  }
  EXPECT_EQ(*IdentityFromTokenReview(Review(true, PodUser("ns2", "pod-9", "uid-9"))),
            (TokenIdentity{"ns2", "pod-9", "uid-9"}));
}

TEST(MissIntake, SourceIsThePodsGateNeverTheBody) {
  const TokenIdentity id{"ml", "p1", "u1"};
  auto src = SourceFromGatedPod(id, GatedPod(core::GateOutcome::kWarm), Report());
  ASSERT_TRUE(src.ok()) << src.status().message();
  EXPECT_EQ(src->kernelcache, "llama");
  EXPECT_EQ(src->fingerprint, kFp);
  EXPECT_EQ(src->manifest_digest, kDigest);
  EXPECT_EQ(src->pod_uid, "u1");

  struct Case {
    const char* name;
    std::optional<Json> pod;
    core::MissReport report;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"unknown pod", std::nullopt, Report(), "not a gated pod"},
      {"another uid", GatedPod(core::GateOutcome::kWarm, kFp, "u2"), Report(), "another uid"},
      {"no consumer label", GatedPod(core::GateOutcome::kWarm, kFp, "u1", ""), Report(),
       "no label"},
      {"gate went Cold", GatedPod(core::GateOutcome::kCold), Report(), "not reported Warm"},
      {"gate failed", GatedPod(core::GateOutcome::kFailed), Report(), "not reported Warm"},
      {"another fingerprint", GatedPod(core::GateOutcome::kWarm), Report("fedcba9876543210"),
       "is not the one"},
  };
  for (const Case& c : cases) {
    auto s = SourceFromGatedPod(id, c.pod, c.report);
    EXPECT_EQ(s.status().code(), StatusCode::kPermissionDenied) << c.name;
    EXPECT_NE(s.status().message().find(c.says), std::string::npos)
        << c.name << ": " << s.status().message();
  }
}

struct Harness {
  MissLedger ledger;
  Json review = Review(true, PodUser());
  bool review_fails = false;
  std::optional<Json> pod = GatedPod(core::GateOutcome::kWarm);
  std::vector<MissRecord> records;
  bool leading = true;
  MissIntake intake() {
    MissIntake in;
    in.review = [this](const Json& req) -> StatusOr<Json> {
      if (review_fails) return UnavailableError("connection refused");
      EXPECT_EQ(req["spec"]["token"], "tok");
      return review;
    };
    in.gated_pod = [this](const std::string& ns, const std::string& name) -> std::optional<Json> {
      if (ns != "ml" || name != "p1") return std::nullopt;
      return pod;
    };
    in.ledger = &ledger;
    in.on_record = [this](const MissSource&, const MissRecord& r) { records.push_back(r); };
    in.now = [] { return Time{}; };
    in.leading = [this] { return leading; };
    return in;
  }
};

HttpRequest Post(const std::string& body, const std::string& auth = "Bearer tok") {
  HttpRequest r;
  r.method = "POST";
  r.path = core::kMissReportPath;
  r.body = body;
  r.authorization = auth;
  return r;
}

TEST(MissIntake, HandlerAnswersEachRefusalWithItsCode) {
  const std::string good = core::MissReportToJson(Report());
  struct Case {
    const char* name;
    std::function<void(Harness&)> setup;
    HttpRequest req;
    int want;
  };
  const std::vector<Case> cases = {
      {"accepted", [](Harness&) {}, Post(good), 200},
      {"no token", [](Harness&) {}, Post(good, ""), 401},
      {"review unavailable", [](Harness& h) { h.review_fails = true; }, Post(good), 503},
      {"not authenticated", [](Harness& h) { h.review = Review(false, PodUser()); }, Post(good),
       401},
      {"pod not gated", [](Harness& h) { h.pod.reset(); }, Post(good), 403},
      {"not a report", [](Harness&) {}, Post("{\"fingerprint\":7}"), 400},
      {"garbage", [](Harness&) {}, Post("\x01\x02"), 400},
      {"too large", [](Harness&) {}, Post(std::string(core::kMaxMissReportBytes + 1, ' ')), 413},
      {"not the leader", [](Harness& h) { h.leading = false; }, Post(good), 503},
  };
  for (const Case& c : cases) {
    Harness h;
    c.setup(h);
    HttpResponse r = HandleMissReport(c.req, h.intake());
    EXPECT_EQ(r.status, c.want) << c.name << ": " << r.body;
    EXPECT_TRUE(Json::parse(r.body).is_object()) << c.name;
    EXPECT_EQ(h.records.size(), c.want == 200 ? 1u : 0u) << c.name;
  }
}

TEST(MissIntake, HandlerRecordsInTheLedgerAndAnswersWhatWasNew) {
  Harness h;
  const std::string body = core::MissReportToJson(Report());
  HttpResponse first = HandleMissReport(Post(body), h.intake());
  EXPECT_EQ(Json::parse(first.body), (Json{{"accepted", 1}, {"new", 1}, {"dropped", 0}}));
  HttpResponse again = HandleMissReport(Post(body), h.intake());
  EXPECT_EQ(Json::parse(again.body), (Json{{"accepted", 1}, {"new", 0}, {"dropped", 0}}));
  auto s = h.ledger.Summary("ml", "llama", kFp, kDigest);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->count, 1);
  ASSERT_EQ(h.records.size(), 2u);
  EXPECT_TRUE(h.records[0].event.has_value());
}

TEST(MissIntake, EventMessageNamesKernelsAndPodsWithinBounds) {
  const MissSource src{"ml", "llama", kFp, kDigest, "p1", "u1"};
  EXPECT_EQ(MissEventMessage(src, {{"kernel add_kernel"}, {"p1", "p2"}}),
            "pods compiled after their gate on fingerprint 0123456789abcdef: kernel add_kernel "
            "(pods: p1, p2); the warmup did not produce these: add the shapes to spec.warmup");
  MissEventDue many;
  for (int i = 0; i < 50; ++i) {
    many.details.push_back("kernel " + std::string(500, 'k'));
    many.pods.push_back("pod-" + std::string(200, 'p'));
  }
  const std::string m = MissEventMessage(src, many);
  EXPECT_LT(m.size(), 1024u) << "named items are cut, the rest counted";
  EXPECT_NE(m.find("and 45 more"), std::string::npos) << m;
}

}  // namespace
}  // namespace kc::op
